import Foundation
import PinproxyCore

/// Carrying out a CONNECT (SPEC §3.1): the blind tunnel's TCP connection
/// and relay. (The intercepted CONNECT's upstream is an ordinary exchange's;
/// its client TLS is started here too.)
extension ClientSession {
    /// `.openTunnel`: the head is consumed; the bytes behind it wait in the
    /// input for the tunnel, and the client is not read meanwhile.
    func openTunnel(consumedHead: Int, to target: Endpoint) {
        client.input.drain(consumedHead)
        headDeadline = nil
        client.stopReading()
        let configuration = worker.configuration.configuration
        connect = TunnelConnect(dialer: UpstreamDialer(
            loop: worker.loop, resolver: worker.resolver, target: target,
            connectTo: configuration.resolveOverrides[target], connectTimeout: configuration.timeouts.connect
        ) { [weak self] result in
            guard let self else { return }
            switch result {
            case let .success((descriptor, _)):
                self.connect?.upstreamDescriptor = descriptor
                self.handle(.tunnelOpened)
            case let .failure(failure):
                self.connect = nil
                self.handle(.upstreamFailed(Self.tunnelFailureKind(failure)))
            }
        })
    }

    private static func tunnelFailureKind(_ failure: UpstreamFailure) -> UpstreamFailureKind {
        switch failure {
        case let .dns(detail): .dns(detail)
        case let .refused(detail): .refused(detail)
        case let .timedOut(detail): .timedOut(detail)
        case let .tls(detail): .tls(detail)
        case .blocked: .tls("no policy runs on a blind tunnel")
        }
    }

    /// `.beginTunnel`: answers `200`, then hands both sockets to a spliced
    /// relay, with what the client sent behind its head as the first bytes up.
    func beginTunnel(answer: [UInt8]) {
        guard let descriptor = connect?.upstreamDescriptor, let plain = client as? PlainStream else { return }
        connect?.upstreamDescriptor = nil
        plain.write(answer)
        plain.flush()
        guard let clientDescriptor = plain.detachDescriptor() else {
            Glibc.close(descriptor)
            return handle(.tunnelClosed(idle: false))
        }
        let tunnel = SplicedTunnel(
            loop: worker.loop, client: clientDescriptor, upstream: descriptor, toUpstream: plain.input,
            toClient: plain.output, idle: worker.configuration.timeouts.tunnelIdle
        ) { [unowned self] ending in
            self.handle(.tunnelClosed(idle: ending == .idle))
        }
        guard let tunnel else {
            worker.logger.log(.warning, "connect", "\(clientAddress) cannot relay a tunnel: no pipe (\(String(cString: strerror(errno))))")
            return handle(.tunnelClosed(idle: false))
        }
        connect?.tunnel = tunnel
        tunnel.start()
    }
}

/// The runtime side of a CONNECT: the dialer of a blind tunnel's upstream,
/// its socket until the `200` is sent, then the relay.
final class TunnelConnect {
    var dialer: UpstreamDialer?
    var upstreamDescriptor: Int32?
    var tunnel: SplicedTunnel?

    init(dialer: UpstreamDialer) { self.dialer = dialer }

    deinit { cancel() }

    /// Closes whatever is open; nothing reports after.
    func cancel() {
        dialer?.cancel()
        dialer = nil
        if let upstreamDescriptor { Glibc.close(upstreamDescriptor) }
        upstreamDescriptor = nil
        tunnel?.close()
        tunnel = nil
    }
}
