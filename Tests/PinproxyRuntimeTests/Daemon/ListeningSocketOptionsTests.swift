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
/// long the kernel holds a silent one, which the request_header clock makes
/// up. Its connections start in delayed-ACK mode (TCP_QUICKACK 0), so the
/// answer carries the acknowledgement of the request.
@Suite("Listening socket options")
struct ListeningSocketOptionsTests {
    private static func deferral(of fd: Int32) -> Int32 {
        var seconds: Int32 = -1
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_DEFER_ACCEPT, &seconds, &length) == 0 else { return -1 }
        return seconds
    }

    /// 1 in quick-ACK mode, 0 in delayed-ACK ("pingpong") mode, -1 on error.
    private static func quickAck(of fd: Int32) -> Int32 {
        var value: Int32 = -1
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, &value, &length) == 0 else { return -1 }
        return value
    }

    /// A TCP socket connected to 127.0.0.1:`port` (blocking).
    private static func connectedClient(port: UInt16) throws -> Int32 {
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(client >= 0)
        let address = try #require(SocketAddress(ip: "127.0.0.1", port: port))
        guard address.withSockaddr({ connect(client, $0, $1) }) == 0 else {
            close(client)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        return client
    }

    /// A connection to `port` on 127.0.0.1 accepted from `listeningFD`: (client, accepted).
    private static func connectAndAccept(_ listeningFD: Int32, port: UInt16) throws -> (Int32, Int32) {
        let client = try connectedClient(port: port)
        // The listener defers accept until data: the client speaks first, as a proxy client does.
        let request = Array("GET / HTTP/1.1\r\n".utf8)
        try #require(send(client, request, request.count, 0) == request.count)
        var poller = pollfd(fd: listeningFD, events: Int16(POLLIN), revents: 0)
        try #require(poll(&poller, 1, 5000) == 1)
        let accepted = accept(listeningFD, nil, nil)
        try #require(accepted >= 0)
        return (client, accepted)
    }

    /// A forward listener on a free port, set up as the daemon sets up its
    /// own: the sockets (close them with `closeAll`), the port, and one
    /// loop's descriptor (the caller closes it).
    private static func daemonListener() throws -> (sockets: ListeningSockets, port: UInt16, descriptor: Int32) {
        let port = ToolPaths.freePort()
        let sockets = ListeningSockets(inherited: [])
        let listener = Self.listener(port: port)
        let (perLoop, failures) = sockets.update(for: [listener], added: [listener], loops: 1)
        #expect(failures.isEmpty, "\(failures)")
        guard let descriptor = perLoop.first?[listener]?.descriptor else {
            sockets.closeAll()
            throw POSIXError(.EADDRNOTAVAIL)
        }
        return (sockets, port, descriptor)
    }

    private static func listener(port: UInt16) -> ListenerConfiguration {
        ListenerConfiguration(address: Endpoint(host: HostName("127.0.0.1")!, port: port), mode: .forward)
    }

    @Test("a bound and an inherited listening socket both defer accept by 1 s and delay ACKs, and every loop's descriptor says so")
    func boundAndInherited() throws {
        // The inherited one: a listening socket as systemd would pass it, without the option.
        let inheritedFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(inheritedFD >= 0)
        let anyPort = try #require(SocketAddress(ip: "127.0.0.1", port: 0))
        try #require(anyPort.withSockaddr({ bind(inheritedFD, $0, $1) }) == 0 && listen(inheritedFD, 16) == 0)
        #expect(Self.deferral(of: inheritedFD) == 0)
        #expect(Self.quickAck(of: inheritedFD) == 1)
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
                #expect(Self.quickAck(of: descriptor.descriptor) == 0, "\(listener.address)")
                #expect(descriptor.acceptDeferral == .seconds(1), "\(listener.address)")
                close(descriptor.descriptor)
            }
        }
        sockets.closeAll()
    }

    @Test("a connection accepted from a listener starts in delayed-ACK mode; from a bare listening socket it does not")
    func acceptedConnectionsDelayTheirAck() throws {
        let (sockets, port, descriptor) = try Self.daemonListener()
        defer { close(descriptor); sockets.closeAll() }
        let (client, accepted) = try Self.connectAndAccept(descriptor, port: port)
        #expect(Self.quickAck(of: accepted) == 0)
        close(accepted)
        close(client)

        // The control: the kernel's default for an accepted connection is quick-ACK mode.
        let bare = try ListeningSocket.bind(try #require(SocketAddress(ip: "127.0.0.1", port: 0)))
        defer { bare.close() }
        bare.deferAcceptUntilData()
        let (bareClient, bareAccepted) = try Self.connectAndAccept(bare.descriptor, port: bare.boundAddress.port)
        #expect(Self.quickAck(of: bareAccepted) == 1)
        close(bareAccepted)
        close(bareClient)
    }

    /// A listener's queue takes a burst of 2,000 connections whole: each one
    /// that has sent its first bytes is there to accept at once. With a
    /// backlog of 1024, about 1,025 were; the rest were dropped on the queue's
    /// overflow and came back only with a retransmission.
    @Test("a burst of 2,000 connections that have spoken all wait in the listen queue, none dropped")
    func listenQueueTakesABurst() throws {
        let burst = 2000
        let somaxconn = (try? String(contentsOfFile: "/proc/sys/net/core/somaxconn", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
        try #require(somaxconn >= burst + 1, "net.core.somaxconn \(somaxconn) caps every backlog below the burst")
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let needed = rlim_t(2 * burst + 256)
        // Raised for the whole test process and left so: other suites run beside this one.
        if limit.rlim_cur < needed {
            try #require(limit.rlim_max >= needed, "descriptor hard limit \(limit.rlim_max)")
            limit.rlim_cur = needed
            try #require(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        }

        let (sockets, port, descriptor) = try Self.daemonListener()
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var clients: [Int32] = []
        defer {
            clients.forEach { close($0) }
            close(descriptor)
            sockets.closeAll()
        }
        for _ in 0..<burst { clients.append(try Self.connectedClient(port: port)) }
        // Each speaks (the accept is deferred until it does).
        var byte: UInt8 = 0x47
        for client in clients { try #require(send(client, &byte, 1, 0) == 1) }
        // Loopback delivers in the sender's call; a dropped connection would
        // come back only after its retransmission timeout, 200 ms or more.
        Thread.sleep(forTimeInterval: 0.05)
        var accepted = 0
        while true {
            let fd = accept(descriptor, nil, nil)
            if fd < 0 { break }
            close(fd)
            accepted += 1
        }
        #expect(accepted == burst, "accepted \(accepted) of \(burst) at once")
    }
}
