import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The systemd side of sd_notify(3): an `AF_UNIX`/`SOCK_DGRAM` socket bound to
/// a path, handed to pinproxy as `$NOTIFY_SOCKET`, that records every datagram.
final class NotifyListener {
    let path: String
    private let descriptor: Int32

    init(directory: String) throws {
        path = directory + "/notify.sock"
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket(AF_UNIX): errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw TestFailure("\(path) is too long for sun_path")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { throw TestFailure("bind(\(path)): errno \(errno)") }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// The next datagram, or nil when none arrives within `timeout`.
    func receive(timeout: TimeInterval) -> String? {
        guard SocketWait.readable(descriptor, within: timeout) else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = SocketWait.receive(descriptor, into: &buffer, atMost: buffer.count)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// Receives until a datagram satisfies `predicate` or `timeout` passes;
    /// returns everything received, the matching datagram last.
    func receive(until predicate: (String) -> Bool, timeout: TimeInterval) -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var received: [String] = []
        while let datagram = receive(timeout: deadline.timeIntervalSinceNow) {
            received.append(datagram)
            if predicate(datagram) { break }
        }
        return received
    }

    /// The state changes of `datagrams` in order (`READY=1`, `RELOADING=1`,
    /// `STOPPING=1`, `WATCHDOG=1`): the `STATUS=` and `MONOTONIC_USEC=` fields
    /// are details of a state, and a datagram of only `STATUS=` is not a change.
    static func states(_ datagrams: [String]) -> [String] {
        datagrams.flatMap { datagram in
            datagram.split(separator: "\n").map(String.init).filter {
                !$0.hasPrefix("STATUS=") && !$0.hasPrefix("MONOTONIC_USEC=")
            }
        }
    }

    /// The value of `key` in `datagram` (`KEY=VALUE` lines), if present.
    static func field(_ key: String, in datagram: String) -> String? {
        datagram.split(separator: "\n").first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
    }
}
