import Foundation
import PinproxyCore

/// A `custom` rule's way to its command (SPEC §2.1), one per rule and
/// configuration generation (a reload starts with an empty cache): what the
/// command is given, the verdicts it gave, and the process-wide executor
/// that runs it.
final class CustomEvaluation: Sendable {
    let rule: String
    let settings: CustomCheckSettings
    /// `limits.custom_checks` of this rule's configuration.
    let limit: Int
    let executor: CustomCheckExecutor
    let cache: CustomVerdictCache

    /// The search path the command gets, as systemd gives services: the
    /// daemon's own environment is never passed on.
    static let searchPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    init(rule: String, settings: CustomCheckSettings, limit: Int, executor: CustomCheckExecutor) {
        self.rule = rule
        self.settings = settings
        self.limit = limit
        self.executor = executor
        cache = CustomVerdictCache(lifetime: settings.cache)
    }

    /// What identifies the question about `chain` from `host`:`port` under this rule.
    func key(for chain: PeerChain, host: HostName, port: UInt16) -> CustomCheckKey {
        CustomCheckKey(scope: ObjectIdentifier(self), host: host.value, port: port,
                       chain: Digest.sha256(chain.served.flatMap(\.certificateSHA256)))
    }

    /// The run that asks the command about `chain` (SPEC §2.1): the served
    /// chain as PEM on its input, the facts in its environment.
    func request(_ key: CustomCheckKey, chain: PeerChain, host: HostName, port: UInt16, peer: String?) -> CustomCheckRequest {
        let pem = chain.served.map { PEMCertificate.encode(der: $0.der) }.joined()
        let verified = (chain.verified ?? []).map { Hex.lowercase($0.certificateSHA256) }
        let environment = [
            "PATH=\(Self.searchPath)",
            "PINPROXY_HOST=\(host.value)",
            "PINPROXY_PORT=\(port)",
            "PINPROXY_RULE=\(rule)",
            "PINPROXY_PEER_ADDRESS=\(peer ?? "")",
            "PINPROXY_VERIFIED_CHAIN_SHA256=\(verified.joined(separator: " "))",
        ]
        return CustomCheckRequest(key: key, scope: self, command: settings.command, environment: environment,
                                  input: Array(pem.utf8), timeout: settings.timeout)
    }

    /// Asks the command (or joins the run already asking it) and calls
    /// `deliver` with its verdict on `loop`, the caller's, never inside this
    /// call. The verdict is cached first, so handshakes that start meanwhile
    /// on any loop find it.
    func ask(_ request: CustomCheckRequest, on loop: EventLoop, deliver: @escaping (CustomVerdict) -> Void) {
        let bound = LoopBound(deliver)
        executor.ask(request, limit: limit) { [cache] verdict in
            cache.store(verdict, for: request.key)
            loop.execute { bound.value(verdict) }
        }
    }

    /// `ask`, waiting on the calling thread (`probe --chain`).
    func verdict(for request: CustomCheckRequest) -> CustomVerdict {
        let verdict = executor.verdict(for: request, limit: limit)
        cache.store(verdict, for: request.key)
        return verdict
    }
}
