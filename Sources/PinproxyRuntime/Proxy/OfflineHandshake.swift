import Foundation
import PinproxyCore

/// The trust decision of a handshake without the connection (`pinproxy probe
/// --chain`, and the x509-limbo test): the handshake's own verify-callback
/// body (`UpstreamHandshake.didReceiveCertificates`) run over a store context
/// that is set up as libssl sets up the handshake's (`X509StoreContext`, with
/// the policy's `SSL_CTX`), and the policy's own evaluator deciding at `time`.
///
/// What only a connection has is absent: no OCSP staple can be read (the
/// chain is evaluated with `.unavailableOffline`, which `RevocationEvaluator`
/// does not hold against it) and no TLS protocol checks run.
enum OfflineHandshake {
    /// Evaluates `served` (leaf first) for `host` under `policy` at `time`
    /// (nil = now). `maxDepth` is OpenSSL's verify depth, for test suites that
    /// set one; the daemon never does. Throws only when OpenSSL cannot set up
    /// the context.
    static func evaluate(_ served: [X509Certificate], host: HostName, port: UInt16, policy: PreparedPolicy,
                         at time: Date?, maxDepth: Int? = nil) throws -> TrustVerdict {
        guard let leaf = served.first else { throw RuntimeError.message("the chain holds no certificate") }
        let now = time ?? Date()
        let handshake = policy.handshake(host: host, port: port)
        handshake.evaluationTime = now
        if policy.policy.ocspStapling != .off { handshake.stapleBeforeStatus = .unavailableOffline }
        func verify() throws {
            let context = try X509StoreContext(store: policy.context.trustStore, leaf: leaf, untrusted: served,
                                               at: now, like: policy.context, maxDepth: maxDepth)
            _ = handshake.didReceiveCertificates(in: context.pointer)
        }
        try verify()
        // A custom rule's command, asked as the daemon asks it, then the
        // verification again with its verdict (a live handshake resumes).
        if handshake.verdict == nil, let request = handshake.pendingCustomRequest, let custom = policy.custom {
            handshake.customVerdict = custom.verdict(for: request)
            try verify()
        }
        guard var verdict = handshake.verdict else { throw RuntimeError.message("the check gave no verdict") }
        // `disable` gathers no facts in a handshake; the probe still shows what was served.
        if verdict.chain.served.isEmpty { verdict.chain.served = served.map(\.facts) }
        return verdict
    }
}
