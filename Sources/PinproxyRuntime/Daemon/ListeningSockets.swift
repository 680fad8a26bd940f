import Foundation
import PinproxyCore

/// The process's listening sockets: one per configured listen address, bound
/// once (or adopted from socket activation) on the main loop, and handed to
/// every event loop as a duplicate of its own (SPEC §5: an address is owned by
/// one pinproxy process; its loops share it).
///
/// Only the main loop touches this object (start, reload, shutdown): the loops
/// get plain descriptors they own, never the sockets themselves.
final class ListeningSockets {
    private var byAddress: [String: ListeningSocket] = [:]
    /// Socket-activated descriptors by `ip:port`, adopted when a listener names their address.
    private var inherited: [String: InheritedSocket] = [:]
    /// Inherited descriptors no listener can adopt: not IPv4/IPv6, or a second one for an address.
    private var unadoptable: [InheritedSocket] = []

    init(inherited sockets: [InheritedSocket]) {
        for socket in sockets {
            if let address = socket.address, inherited[address] == nil {
                inherited[address] = socket
            } else {
                unadoptable.append(socket)
            }
        }
    }

    deinit {
        closeAll()
        closeUnadopted()
    }

    /// The inherited descriptors no listener has taken (SPEC §5: an error at
    /// start), in descriptor order.
    var unadopted: [InheritedSocket] {
        (Array(inherited.values) + unadoptable).sorted { $0.fd < $1.fd }
    }

    /// Closes the inherited descriptors no listener took.
    func closeUnadopted() {
        unadopted.forEach { Glibc.close($0.fd) }
        inherited.removeAll()
        unadoptable.removeAll()
    }

    /// The address a listener binds: its IP literal (`localhost` is 127.0.0.1).
    static func socketAddress(of listener: ListenerConfiguration) throws -> SocketAddress {
        let endpoint = listener.address
        guard let address = SocketAddress(ip: endpoint.host.value == "localhost" ? "127.0.0.1" : endpoint.host.value,
                                          port: endpoint.port) else {
            throw RuntimeError.message("cannot listen on \(endpoint): not an IP address")
        }
        return address
    }

    /// Makes every listener of `listeners` have a socket (the one it already
    /// has, an inherited one for its address, or a new one), closes the
    /// sockets no listener names any more, and returns for each of `loops`
    /// event loops its own descriptor for each listener in `added`.
    /// A listener whose address cannot be bound is left out, with its error in `failures`.
    func update(for listeners: [ListenerConfiguration], added: [ListenerConfiguration], loops: Int)
        -> (perLoop: [[ListenerConfiguration: ListenerDescriptor]], failures: [Error]) {
        var failures: [Error] = []
        var wanted: [String: ListeningSocket] = [:]
        var socketOf: [ListenerConfiguration: ListeningSocket] = [:]
        for listener in listeners {
            do {
                let key = try Self.socketAddress(of: listener).description
                let socket = try wanted[key] ?? byAddress[key] ?? adoptOrBind(key, listener)
                wanted[key] = socket
                socketOf[listener] = socket
            } catch {
                failures.append(error)
            }
        }
        for (key, socket) in byAddress where wanted[key] == nil { socket.close() }
        byAddress = wanted
        var perLoop = [[ListenerConfiguration: ListenerDescriptor]](repeating: [:], count: loops)
        for listener in added {
            guard let socket = socketOf[listener] else { continue }
            for index in 0..<loops {
                do {
                    perLoop[index][listener] = ListenerDescriptor(descriptor: try socket.duplicate(),
                                                                  boundAddress: socket.boundAddress,
                                                                  acceptDeferral: socket.acceptDeferral)
                } catch {
                    failures.append(error)
                }
            }
        }
        return (perLoop, failures)
    }

    /// Closes every socket this process holds (shutdown: with the loops'
    /// listeners closed too, the kernel refuses new connections).
    func closeAll() {
        byAddress.values.forEach { $0.close() }
        byAddress.removeAll()
    }

    /// A proxy client always speaks first (a request head, or CONNECT) and is
    /// answered, so every listener's socket, inherited ones too, defers
    /// accept until data and leaves the request's ACK to the answer.
    private func adoptOrBind(_ key: String, _ listener: ListenerConfiguration) throws -> ListeningSocket {
        let socket = try inherited.removeValue(forKey: key).map { ListeningSocket(adopting: $0.fd) }
            ?? ListeningSocket.bind(Self.socketAddress(of: listener))
        socket.deferAcceptUntilData()
        socket.delayAcknowledgements()
        return socket
    }
}
