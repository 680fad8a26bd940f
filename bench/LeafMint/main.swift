import Foundation
import PinproxyCore
import PinproxyRuntime

// The cost of one interception leaf (SPEC §3.1: minting runs on an event
// loop, so it must be one signature and no key generation), and of setting up
// the server side of one intercepted connection once its leaf is cached.
//
//   leaf-mint-bench [COUNT] [leaves|connections]
//
// COUNT defaults to 1000; 0 only creates the CA. Creates a CA in a temporary directory, then
// `leaves` (the default) mints 50 leaves to warm up and COUNT leaves for
// distinct hosts past the cache; `connections` makes and frees 50 server
// connections for one host to warm up, then COUNT. Prints the wall time per
// leaf or connection. Under callgrind, run it with two COUNTs: the difference
// of the totals divided by the difference of the COUNTs is the instructions
// of one, without the CA's creation (bench/leaf-mint-cost.sh does that).
let arguments = CommandLine.arguments.dropFirst()
let count = arguments.first.flatMap { Int($0) } ?? 1000
let measuresConnections = arguments.dropFirst().first == "connections"
let directory = NSTemporaryDirectory() + "pinproxy-leaf-bench-\(getpid())"
defer { try? FileManager.default.removeItem(atPath: directory) }
let authority = try InterceptionAuthority.create(in: directory + "/ca", for: InterceptionScope(names: ["example.com"]))
let now = Date()

/// Unless `count` is 0: runs `step(i)` 50 times to warm up (indices
/// 0..<50), then `count` times (indices from 0 again), and prints the wall
/// time per step.
func measure(_ what: String, _ step: (Int) throws -> Void) rethrows {
    guard count > 0 else { return }
    for index in 0..<50 { try step(index) }
    let start = DispatchTime.now().uptimeNanoseconds
    for index in 0..<count { try step(index) }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000
    print("\(what): \(count), wall \(String(format: "%.1f", elapsed / Double(count))) µs each")
}

if measuresConnections {
    let host = HostName("api.example.com")!
    try measure("server connections made and freed (leaf cached)") { _ in
        try authority.makeAndFreeConnection(for: host, at: now)
    }
} else {
    // Distinct hosts past the cache: the warm-up's and the measured ones are minted alike.
    try measure("leaves minted (one ECDSA P-256 signature each)") { index in
        try authority.mintUncachedLeaf(for: HostName("host\(index).example.com")!, at: now)
    }
}
