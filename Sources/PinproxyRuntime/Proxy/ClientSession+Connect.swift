import Foundation
import PinproxyCore

/// Carrying out a CONNECT (SPEC §3.1): the blind tunnel's TCP connection and
/// relay; for an intercepted one (whose upstream an ordinary exchange made and
/// verified), the `200`, the client's TLS, and the verified upstream kept for
/// the first request inside.
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

extension ClientSession {
    /// `.beginInterception`: the verified upstream is kept for the first
    /// request inside; the client gets its `200`; once that is written, its
    /// TLS handshake runs over the same socket with a certificate for `host`.
    func beginInterception(answer: [UInt8], host: HostName) {
        guard let exchange, let upstream = exchange.upstream, let plain = client as? PlainStream else { return }
        exchange.upstream = nil
        // The machine keeps the CONNECT's progress until the handshake ends; the runtime side is done.
        self.exchange = nil
        interception = ClientInterception(host: host, authority: exchange.configuration.interception, reserved: upstream)
        plain.stopReading()
        plain.write(answer)
        plain.flush()
        if plain.output.isEmpty { startClientTLS() } else { interception?.awaitsAnswerDrain = true }
    }

    /// The `200` is written: the socket becomes a TLS server stream, fed first
    /// with what the client sent behind its CONNECT (a ClientHello sent early).
    func startClientTLS() {
        guard let interception, let plain = client as? PlainStream else { return }
        interception.awaitsAnswerDrain = false
        let prefix = plain.input.withContiguousPrefix(count: plain.input.count) { Array($0) }
        plain.input.drain(prefix.count)
        guard let descriptor = plain.detachDescriptor() else { return }
        let connection: TLSConnection
        do {
            guard let authority = interception.authority else { throw RuntimeError.message("interception is not configured") }
            connection = try authority.makeConnection(for: interception.host)
        } catch {
            Glibc.close(descriptor)
            return handle(.clientTLSFailed("no certificate for \(interception.host): \(error)"))
        }
        guard let stream = TLSStream(loop: worker.loop, descriptor: descriptor, connection: connection,
                                     role: .server(prefix: prefix)) else {
            return handle(.clientTLSFailed("cannot create a TLS stream"))
        }
        let configuration = worker.configuration
        client = stream
        stream.delegate = self
        stream.enableReadAhead()
        stream.setReadHighWatermark(configuration.limits.maxHeaderBytes + 16 * 1024)
        stream.setWriteTimeout(configuration.idleTimeout)
        stream.startHandshake()
        interception.handshakeTimer = Timer(loop: worker.loop) { [unowned self] in
            self.handle(.clientTLSFailed("handshake not finished within timeouts.handshake"))
        }
        interception.handshakeTimer?.schedule(after: configuration.timeouts.handshake)
    }

    /// The client's handshake ended, well or not.
    func clientHandshakeEnded(_ ending: StreamEnd?) {
        interception?.handshakeTimer?.cancel()
        interception?.handshakeTimer = nil
        guard let ending else { return handle(.clientTLSReady) }
        // A refusal of pinproxy's own (the SNI) is the stream's `.tlsFailed` detail.
        handle(.clientTLSFailed(ending == .endOfStream ? "client closed during the handshake" : "\(ending)"))
    }

    /// The verified upstream kept for the first request inside an intercepted
    /// tunnel, when it fits `key`; one that does not (a reload came between) is closed.
    func takeReservedUpstream(for key: PoolKey) -> UpstreamConnection? {
        guard let reserved = interception?.reserved else { return nil }
        interception?.reserved = nil
        guard reserved.key == key, reserved.stream.isOpen else { reserved.close(); return nil }
        return reserved
    }

    /// The kept upstream read or ended before the first request: it is dropped
    /// (the request will get a fresh verified connection). True when it was that one.
    func dropReservedUpstream(_ connection: UpstreamConnection) -> Bool {
        guard let reserved = interception?.reserved, reserved === connection else { return false }
        interception?.reserved = nil
        reserved.close()
        return true
    }
}

/// The runtime side of an intercepted CONNECT: the host its client TLS is
/// for, the CA, the handshake's timeout, and the verified upstream kept for
/// the first request inside.
final class ClientInterception {
    let host: HostName
    let authority: InterceptionAuthority?
    var reserved: UpstreamConnection?
    var handshakeTimer: Timer?
    /// The `200` is still being written; the handshake starts when it is.
    var awaitsAnswerDrain = false

    init(host: HostName, authority: InterceptionAuthority?, reserved: UpstreamConnection) {
        self.host = host
        self.authority = authority
        self.reserved = reserved
    }

    deinit { cancel() }

    func cancel() {
        handshakeTimer?.cancel()
        handshakeTimer = nil
        reserved?.close()
        reserved = nil
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
