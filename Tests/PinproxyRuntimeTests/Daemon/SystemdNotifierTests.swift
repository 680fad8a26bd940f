import Foundation
import Testing
@testable import PinproxyRuntime
#if canImport(Glibc)
import Glibc
#endif

/// A datagram socket standing in for systemd's notify socket.
private final class NotifySocket {
    let descriptor: Int32
    let name: String

    /// Binds a filesystem socket in `directory`, or an abstract one when `directory` is nil.
    init(directory: String?) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let text = directory.map { $0 + "/notify" } ?? "@pinproxy-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        name = text
        var bytes = Array(text.utf8)
        if directory == nil { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (directory == nil ? 0 : 1))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(descriptor) }

    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = SocketWait.receive(descriptor, into: &buffer, atMost: buffer.count)
        return count < 0 ? nil : String(decoding: buffer[0..<count], as: UTF8.self)
    }
}

@Suite("SystemdNotifier")
struct SystemdNotifierTests {
    @Test("without NOTIFY_SOCKET there is no notifier", arguments: [[:], ["NOTIFY_SOCKET": ""]])
    func absent(environment: [String: String]) {
        #expect(SystemdNotifier(environment: environment) == nil)
    }

    @Test("every helper sends its exact datagram, to a path or an abstract socket", arguments: [true, false])
    func datagrams(isPath: Bool) throws {
        let directory = try TemporaryDirectory()
        let socket = try NotifySocket(directory: isPath ? directory.path : nil)
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.name]))
        #expect(notifier.ready())
        #expect(notifier.ready(status: "serving 2 listeners"))
        #expect(notifier.reloading(monotonicMicroseconds: 123_456_789))
        #expect(notifier.stopping())
        #expect(notifier.status("draining\n3 connections"))
        #expect(notifier.watchdog())
        #expect(notifier.notify(["ERRNO=5", "BUSERROR=x"]))
        let received = (0..<7).map { _ in socket.receive() }
        #expect(received == [
            "READY=1",
            "READY=1\nSTATUS=serving 2 listeners",
            "RELOADING=1\nMONOTONIC_USEC=123456789",
            "STOPPING=1",
            "STATUS=draining 3 connections",
            "WATCHDOG=1",
            "ERRNO=5\nBUSERROR=x",
        ])
    }

    @Test("reloading stamps the current CLOCK_MONOTONIC time")
    func reloadingUsesMonotonicClock() throws {
        let directory = try TemporaryDirectory()
        let socket = try NotifySocket(directory: directory.path)
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.name]))
        let before = SystemdNotifier.monotonicMicroseconds()
        notifier.reloading()
        let after = SystemdNotifier.monotonicMicroseconds()
        let message = try #require(socket.receive())
        let stamp = try #require(UInt64(message.replacingOccurrences(of: "RELOADING=1\nMONOTONIC_USEC=", with: "")))
        #expect(before <= stamp && stamp <= after)
    }

    @Test("a send to a socket nobody listens on fails as a value")
    func sendFailure() throws {
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": "/nonexistent/notify"]))
        #expect(notifier.ready() == false)
    }

    @Test("the watchdog interval is half of WATCHDOG_USEC, for this process only", arguments: [
        (["WATCHDOG_USEC": "30000000"], Duration?.some(.seconds(15))),
        (["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(getpid())"], .some(.seconds(15))),
        (["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"], nil),
        (["WATCHDOG_USEC": "0"], nil),
        (["WATCHDOG_USEC": "soon"], nil),
        ([:], nil),
    ])
    func watchdogInterval(environment: [String: String], expected: Duration?) {
        #expect(SystemdNotifier.watchdogInterval(environment: environment) == expected)
    }
}
