import Foundation
import PinproxyCore
import Testing
@testable import PinproxyRuntime
#if canImport(Glibc)
import Glibc
#endif

/// Every listening socket the daemon serves clients on, bound by it or
/// inherited from systemd, hands a connection to accept(2) only once its first
/// bytes are in (TCP_DEFER_ACCEPT), and each loop's descriptor carries how
/// long the kernel holds a silent one, which the request_header clock makes up.
@Suite("Accept deferral")
struct AcceptDeferralTests {
    private static func deferral(of fd: Int32) -> Int32 {
        var seconds: Int32 = -1
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_DEFER_ACCEPT, &seconds, &length) == 0 else { return -1 }
        return seconds
    }

    private static func listener(port: UInt16) -> ListenerConfiguration {
        ListenerConfiguration(address: Endpoint(host: HostName("127.0.0.1")!, port: port), mode: .forward)
    }

    @Test("a bound and an inherited listening socket both defer accept by 1 s, and every loop's descriptor says so")
    func boundAndInherited() throws {
        // The inherited one: a listening socket as systemd would pass it, without the option.
        let inheritedFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(inheritedFD >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(inheritedFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0 && listen(inheritedFD, 16) == 0)
        #expect(Self.deferral(of: inheritedFD) == 0)
        let inheritedAddress = try #require(SocketActivation.boundAddress(of: inheritedFD))
        let inheritedPort = try #require(UInt16(inheritedAddress.split(separator: ":").last ?? ""))

        let sockets = ListeningSockets(inherited: [InheritedSocket(fd: inheritedFD, name: "forward", address: inheritedAddress)])
        let listeners = [Self.listener(port: inheritedPort), Self.listener(port: ToolPaths.freePort())]
        let (perLoop, failures) = sockets.update(for: listeners, added: listeners, loops: 2)
        #expect(failures.isEmpty, "\(failures)")
        #expect(perLoop.count == 2)
        for descriptors in perLoop {
            #expect(descriptors.count == 2)
            for (listener, descriptor) in descriptors {
                #expect(Self.deferral(of: descriptor.descriptor) == 1, "\(listener.address)")
                #expect(descriptor.acceptDeferral == .seconds(1), "\(listener.address)")
                close(descriptor.descriptor)
            }
        }
        sockets.closeAll()
    }
}
