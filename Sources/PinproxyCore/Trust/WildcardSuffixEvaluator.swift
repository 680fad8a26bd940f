import Foundation

/// A wildcard never covers a public suffix (SPEC §2.3 step 2): a leaf whose
/// SAN is `*.com` or `*.co.uk` is refused.
///
/// The CA/B Forum BR §3.2.2.6 forbid issuing a wildcard "immediately to the
/// left of a registry-controlled or public suffix", and Chrome refuses to
/// match one (`VerifyHostname`, with the ICANN rules only). pinproxy refuses
/// the leaf outright, whichever name it is asked for: such a certificate is
/// mis-issued. Only the leaf's names are read.
public struct WildcardSuffixEvaluator: TrustEvaluator {
    public let publicSuffixes: PublicSuffixList

    public init(publicSuffixes: PublicSuffixList) {
        self.publicSuffixes = publicSuffixes
    }

    public func evaluate(_ chain: PeerChain, now: Date) -> TrustEvaluation {
        guard let leaf = chain.verified?.first, let names = leaf.profile?.dnsNames else { return .trusted }
        for name in names {
            guard let base = DNSNameSyntax.wildcardBase(of: name) else { continue }
            if !base.contains(".") || publicSuffixes.isPublicSuffix(base) {
                return .failed(reason: .chainUntrusted,
                               detail: "the leaf certificate \(leaf.subject) has the wildcard SAN \"\(name)\" over the public suffix \"\(base)\"")
            }
        }
        return .trusted
    }
}
