import Foundation
import PinproxyCore
import PinproxyRuntime

// The cost of one interception leaf (SPEC §3.1: minting runs on an event
// loop, so it must be one signature and no key generation), and of setting up
// the server side of one intercepted connection once its leaf is cached.
//
//   leaf-mint-bench [COUNT] [leaves|connections]
//
// COUNT defaults to 1000; 0 only creates the CA (and, for `connections`,
// caches the one host's leaf). Creates a CA in a temporary directory, then
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
if measuresConnections {
    let host = HostName("api.example.com")!
    for _ in 0..<50 { try authority.makeAndFreeConnection(for: host, at: now) }
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<count { try authority.makeAndFreeConnection(for: host, at: now) }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000
    if count > 0 {
        print("connections: \(count), wall \(String(format: "%.1f", elapsed / Double(count))) µs per server connection made and freed (leaf cached)")
    }
} else {
    let hosts = (0..<max(count, 50)).map { HostName("host\($0).example.com")! }
    if count > 0 {
        for host in hosts.prefix(50) { try authority.mintUncachedLeaf(for: host, at: now) }
    }
    let start = DispatchTime.now().uptimeNanoseconds
    for host in hosts.prefix(count) { try authority.mintUncachedLeaf(for: host, at: now) }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000
    if count > 0 {
        print("leaves: \(count), wall \(String(format: "%.1f", elapsed / Double(count))) µs per leaf (one ECDSA P-256 signature each)")
    }
}
