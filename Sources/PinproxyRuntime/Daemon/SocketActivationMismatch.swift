import Foundation

/// Inherited socket-activation descriptors that no configured listener takes
/// (SPEC §5: an error at start).
///
/// Why an error and not a warning: systemd keeps such a socket bound and
/// queues its clients, so they hang until they time out while the daemon
/// serves elsewhere. Failing the start puts both addresses side by side in
/// the journal, which is all the operator needs to bring `ListenStream=`
/// and `listeners` back in step.
struct SocketActivationMismatch: Error, CustomStringConvertible {
    let unmatched: [InheritedSocket]
    /// The configured listen addresses, as the config writes them.
    let listeners: [String]

    var description: String {
        let sockets = unmatched.map { socket in
            let name = socket.name.map { ", FileDescriptorName=\($0)" } ?? ""
            let address = socket.address ?? "not an IPv4/IPv6 socket"
            return "fd \(socket.fd) (\(address)\(name))"
        }
        let configured = listeners.isEmpty ? "none" : listeners.joined(separator: ", ")
        return "socket activation: inherited \(sockets.joined(separator: ", ")) "
            + "\(unmatched.count == 1 ? "matches" : "match") no configured listener (listeners: \(configured)); "
            + "make ListenStream= in pinproxy.socket and \"listen\" in the config name the same ip:port"
    }
}
