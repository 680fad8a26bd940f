import Foundation
import Testing
@testable import PinproxyRuntime
#if canImport(Glibc)
import Glibc
#endif

@Suite("SocketActivation")
struct SocketActivationTests {
    /// A listening TCP socket on loopback with an ephemeral port.
    private func listeningSocket(ipv6: Bool) throws -> Int32 {
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        let bound: Int32
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_addr = in6addr_loopback
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        try #require(bound == 0)
        try #require(listen(fd, 16) == 0)
        return fd
    }

    /// Copies of `a` and `b` at two consecutive free descriptors (systemd's
    /// `SD_LISTEN_FDS_START` layout), the first returned. fcntl(F_DUPFD) takes
    /// the lowest free number at or above the one asked for, so no descriptor
    /// that another test holds is ever replaced (as dup2 onto a fixed number
    /// would, closing it under that test).
    private static func consecutiveCopies(of a: Int32, _ b: Int32) throws -> Int32 {
        var floor: Int32 = 100
        for _ in 0..<1000 {
            let first = fcntl(a, F_DUPFD, floor)
            try #require(first >= 0, "F_DUPFD: errno \(errno)")
            let second = fcntl(b, F_DUPFD, first + 1)
            try #require(second >= 0, "F_DUPFD: errno \(errno)")
            if second == first + 1 { return first }
            close(first)
            close(second)
            floor = second + 1
        }
        throw TestFailure("no two consecutive free descriptors")
    }

    @Test("inherited sockets are listed with their names and bound addresses")
    func inherited() throws {
        let v4 = try listeningSocket(ipv6: false)
        let v6 = try listeningSocket(ipv6: true)
        defer { close(v4); close(v6) }
        let first = try Self.consecutiveCopies(of: v4, v6)
        defer { close(first); close(first + 1) }
        let port4 = try #require(SocketActivation.boundAddress(of: v4)?.split(separator: ":").last)
        let port6 = try #require(SocketActivation.boundAddress(of: v6)?.split(separator: ":").last)
        let environment = ["LISTEN_PID": "\(getpid())", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "forward:gateway"]
        let sockets = SocketActivation.inheritedListeners(environment: environment, firstDescriptor: first)
        #expect(sockets == [
            InheritedSocket(fd: first, name: "forward", address: "127.0.0.1:\(port4)"),
            InheritedSocket(fd: first + 1, name: "gateway", address: "[::1]:\(port6)"),
        ])
        #expect(fcntl(first, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test("nothing is inherited unless LISTEN_PID is this process", arguments: [
        ["LISTEN_PID": "1", "LISTEN_FDS": "1"],
        ["LISTEN_FDS": "1"],
        ["LISTEN_PID": "\(getpid())", "LISTEN_FDS": "0"],
        ["LISTEN_PID": "\(getpid())"],
    ])
    func notOurs(environment: [String: String]) {
        #expect(SocketActivation.inheritedListeners(environment: environment) == [])
    }
}
