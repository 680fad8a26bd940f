import Foundation
import PinproxyCore
import PinproxyRuntime

// The cost of one interception leaf (SPEC §3.1: minting runs on an event
// loop, so it must be one signature and no key generation).
//
//   leaf-mint-bench [COUNT]     default 1000; COUNT 0 only creates the CA
//
// Creates a CA in a temporary directory, mints 50 leaves to warm up, then
// COUNT leaves for distinct hosts past the cache, and prints the wall time
// per leaf. Under callgrind, run it with two COUNTs: the difference of the
// totals divided by the difference of the COUNTs is the instructions of one
// leaf, without the CA's creation (bench/leaf-mint-cost.sh does that).
let count = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 1000
let directory = NSTemporaryDirectory() + "pinproxy-leaf-bench-\(getpid())"
defer { try? FileManager.default.removeItem(atPath: directory) }
let authority = try InterceptionAuthority.create(in: directory + "/ca", for: InterceptionScope(names: ["example.com"]))
let hosts = (0..<max(count, 50)).map { HostName("host\($0).example.com")! }
let now = Date()
if count > 0 {
    for host in hosts.prefix(50) { try authority.mintUncachedLeaf(for: host, at: now) }
}
let start = DispatchTime.now().uptimeNanoseconds
for host in hosts.prefix(count) { try authority.mintUncachedLeaf(for: host, at: now) }
let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000
if count > 0 {
    print("leaves: \(count), wall \(String(format: "%.1f", elapsed / Double(count))) µs per leaf (one ECDSA P-256 signature each)")
}
