import Foundation
import PinproxyCore

/// Why no verified upstream connection could be made (SPEC §3 statuses).
enum UpstreamFailure: Error {
    case dns(String)
    case refused(String)
    case timedOut(String)
    case tls(String)
    /// The trust policy blocked the server; nothing was relayed.
    case blocked(TrustVerdict, peer: SocketAddress)
}

/// Makes one verified TLS connection: a TCP connection from an
/// `UpstreamDialer`, then the TLS handshake with the policy evaluated inside it. Reports exactly once,
/// on the loop, unless cancelled.
final class UpstreamConnector: ByteStreamDelegate {
    struct Success {
        var connection: UpstreamConnection
        /// Set when report-only mode let a failing server through.
        var reported: TrustVerdict?
    }

    private let loop: EventLoop
    private let target: Endpoint
    private let key: PoolKey
    private let policy: PreparedPolicy
    private let timeouts: Timeouts
    /// `upstream_reuse.tls_sessions`: offer and store sessions for resumption.
    private let resumesSessions: Bool
    private unowned let pool: UpstreamPool
    private var completion: ((Result<Success, UpstreamFailure>) -> Void)?
    /// The loop's lane of the rule's counters.
    private let lane: Int

    private var dialer: UpstreamDialer?
    private var peer: SocketAddress?
    private var pending: UpstreamConnection?
    private var handshakeTimer: Timer?

    init(loop: EventLoop, resolver: DNSResolver, pool: UpstreamPool, target: Endpoint, connectTo override: Endpoint?,
         key: PoolKey, policy: PreparedPolicy, timeouts: Timeouts, resumesSessions: Bool = true, lane: Int = 0,
         completion: @escaping (Result<Success, UpstreamFailure>) -> Void) {
        self.lane = lane
        self.loop = loop
        self.target = target
        self.key = key
        self.policy = policy
        self.timeouts = timeouts
        self.resumesSessions = resumesSessions
        self.pool = pool
        self.completion = completion
        dialer = UpstreamDialer(loop: loop, resolver: resolver, target: target, connectTo: override,
                                connectTimeout: timeouts.connect) { [weak self] result in
            guard let self else { return }
            self.dialer = nil
            switch result {
            case let .success((descriptor, peer)): self.startHandshake(descriptor: descriptor, address: peer)
            case let .failure(failure): self.finish(.failure(failure))
            }
        }
    }

    deinit { cancel() }

    /// Abandons the attempt; the completion never runs.
    func cancel() {
        completion = nil
        dialer?.cancel()
        handshakeTimer?.cancel()
        pending?.close()
        pending = nil
    }

    private func startHandshake(descriptor: Int32, address: SocketAddress) {
        peer = address
        // The policy's check runs inside the handshake, in the verify callback
        // (and again in the OCSP status callback); the handshake keeps the verdict.
        let handshake = policy.handshake(host: target.host, port: target.port)
        handshake.peerAddress = address.description
        let key = self.key
        if resumesSessions {
            // Unowned, as `pool` is here: the pool lives as long as its loop, longer than any handshake on it.
            handshake.onNewSession = { [unowned pool] session in pool.store(session, for: key) }
        }
        let connection: TLSConnection
        do {
            connection = try policy.context.makeConnection(for: handshake, resuming: resumableSession())
        } catch {
            close(descriptor)
            finish(.failure(.tls("\(error)")))
            return
        }
        guard let stream = TLSStream(loop: loop, descriptor: descriptor, connection: connection, role: .client) else {
            finish(.failure(.tls("cannot create a TLS stream")))
            return
        }
        let upstream = UpstreamConnection(key: key, peer: address, stream: stream, handshake: handshake,
                                          idleTimeout: EventTimeout(timeouts.idle))
        stream.delegate = self
        pending = upstream
        if let custom = policy.custom {
            // SPEC §2.1: the handshake waits for the command without blocking the loop.
            handshake.onCustomVerdictNeeded = { [loop, weak handshake, weak stream] request in
                custom.ask(request, on: loop) { verdict in
                    guard let handshake, let stream else { return }
                    handshake.customVerdict = verdict
                    stream.resumeHandshake()
                }
            }
        }
        stream.startHandshake()
        handshakeTimer = Timer(loop: loop) { [weak self] in
            self?.finish(.failure(.timedOut("TLS handshake with \(address) timed out")))
        }
        handshakeTimer?.schedule(after: timeouts.handshake)
    }

    /// The session to offer, if any. A resumed handshake verifies nothing,
    /// so a custom rule resumes only sessions younger than its verdicts'
    /// `cache` (none with `"0s"`): the command is asked as often as configured.
    private func resumableSession() -> TLSSessionHandle? {
        guard resumesSessions, let session = pool.session(for: key) else { return nil }
        guard let custom = policy.custom else { return session }
        return session.age < custom.settings.cache ? session : nil
    }

    func streamDidRead(_ stream: ByteStream) {}
    func streamDidDrain(_ stream: ByteStream) {}

    func streamDidConnect(_ stream: ByteStream) {
        guard let connection = pending else { return }
        pending = nil
        handshakeTimer?.cancel()
        var verdict = connection.handshake.verdict
        if connection.handshake.learnsPins, let learning = policy.learning, let accepted = verdict, let peer {
            // SPEC §2.1: the verdict is final now; learn the chain, or, when
            // another connection learned first, stand by its pins.
            let settled = learning.learn(from: accepted, host: target.host, now: Date())
            guard settled.decision.permitsRelay else {
                connection.close()
                finish(.failure(.blocked(settled, peer: peer)))
                return
            }
            verdict = settled
        }
        connection.didConnect()
        let reported = verdict.flatMap { $0.decision.permitsRelay && $0.decision.reason != nil ? $0 : nil }
        if reported != nil {
            // Resuming a session skips verification: a server let through
            // in report-only mode must be evaluated (and reported) again.
            pool.forgetSession(for: key)
        }
        finish(.success(Success(connection: connection, reported: reported)))
    }

    func stream(_ stream: ByteStream, didEnd ending: StreamEnd) {
        guard let connection = pending else { return }
        if let verdict = connection.handshake.verdict, !verdict.decision.permitsRelay, let peer {
            finish(.failure(.blocked(verdict, peer: peer)))
        } else if case let .tlsFailed(detail) = ending {
            finish(.failure(.tls(UpstreamHandshakeFailure.detail(openSSL: detail, peer: peer))))
        } else {
            finish(.failure(.tls("TLS handshake with \(peer.map { "\($0)" } ?? "upstream") failed (\(ending))")))
        }
    }

    /// SPEC §6: every handshake's outcome, and from a verified chain its pins and leaf.
    private func count(_ result: Result<Success, UpstreamFailure>) {
        let counters = policy.counters
        switch result {
        case let .success(success) where success.reported != nil:
            counters.lane(lane).handshakesReported.add()
        case let .success(success):
            counters.handshakeAccepted(on: lane, verdict: success.connection.handshake.verdict,
                                       resumed: success.connection.stream.resumedSession, now: Date())
        case .failure(.blocked):
            counters.lane(lane).handshakesBlocked.add()
        case .failure:
            counters.lane(lane).handshakesFailed.add()
        }
    }

    private func finish(_ result: Result<Success, UpstreamFailure>) {
        let completion = self.completion
        self.completion = nil
        if completion != nil { count(result) }
        handshakeTimer?.cancel()
        if case .failure = result {
            pending?.close()
            pending = nil
            pool.forgetSession(for: key)
        }
        completion?(result)
    }
}
