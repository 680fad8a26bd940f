import Foundation

/// RFC 5280 §4.2.1.10 name constraints on dNSNames, over the verified chain,
/// where OpenSSL 3.0 falls short of the browsers (SPEC §2.3 step 2).
///
/// OpenSSL compares a wildcard SAN with a constraint as a plain string, so
/// `*.example.com` escapes an excluded `bar.example.com` (CVE-2025-61727; Go
/// fixed the same in crypto/x509). Here a wildcard is excluded when any name
/// it can match is, and permitted only when every name it can match is. Also
/// refused, as rustls-webpki refuses them and x509-limbo expects:
/// - a nameConstraints extension in the leaf (§4.2.1.10: "MUST be used only in a CA certificate");
/// - one with neither permitted nor excluded subtrees (§4.2.1.10: "either the
///   permittedSubtrees field or the excludedSubtrees MUST be present"; an
///   empty SEQUENCE violates `SIZE (1..MAX)`);
/// - a dNSName constraint that is not a DNS name (a leading period is the
///   URI/email form, not a dNSName one);
/// - under a CA with dNSName constraints, a SAN dNSName that is not a DNS name
///   (`.example.com`), since it cannot be shown to be inside the permitted names.
/// A non-critical extension is enforced like a critical one and not refused:
/// the CA/B Forum BR (§7.1.2.10.8) allow it, and Chrome, Firefox and webpki accept it.
public struct NameConstraintEvaluator: TrustEvaluator {
    public init() {}

    public func evaluate(_ chain: PeerChain, now: Date) -> TrustEvaluation {
        guard let verified = chain.verified, let leaf = verified.first else { return .trusted }
        if verified.count > 1, leaf.profile?.nameConstraints != nil {
            return failure("the leaf certificate \(leaf.subject) carries name constraints, which only a CA may")
        }
        for (index, certificate) in verified.enumerated() where index > 0 {
            guard let constraints = certificate.profile?.nameConstraints else { continue }
            if !constraints.hasPermittedSubtrees && !constraints.hasExcludedSubtrees {
                return failure("CA certificate \(certificate.subject) has name constraints with no subtree")
            }
            if let bad = (constraints.permittedDNS + constraints.excludedDNS).first(where: { !DNSNameSyntax.isConstraintBase($0) }) {
                return failure("CA certificate \(certificate.subject) has a malformed dNSName constraint \"\(bad)\"")
            }
            // RFC 5280 §6.1.3 (b), (c): constraints apply to every certificate
            // below the CA, except self-issued intermediates.
            for (belowIndex, below) in verified[..<index].enumerated() {
                guard let profile = below.profile, belowIndex == 0 || !profile.isSelfIssued else { continue }
                if let problem = check(profile.dnsNames, against: constraints) {
                    return failure("\(below.subject): \(problem) of CA certificate \(certificate.subject)")
                }
            }
        }
        return .trusted
    }

    /// The first SAN dNSName that breaks `constraints`, described; nil when all hold.
    private func check(_ names: [String], against constraints: NameConstraints) -> String? {
        let constrainsDNS = !constraints.permittedDNS.isEmpty || !constraints.excludedDNS.isEmpty
        for name in names {
            if constrainsDNS && !DNSNameSyntax.isPresentedName(name) {
                return "SAN \"\(name)\" is not a DNS name and cannot satisfy the dNSName constraints"
            }
            if let excluded = constraints.excludedDNS.first(where: { DNSNameSyntax.reaches(name, subtree: $0) }) {
                return "SAN \"\(name)\" reaches the excluded subtree \"\(excluded)\""
            }
            if !constraints.permittedDNS.isEmpty,
               !constraints.permittedDNS.contains(where: { DNSNameSyntax.isCovered(name, bySubtree: $0) }) {
                return "SAN \"\(name)\" is outside the permitted dNSName subtrees"
            }
        }
        return nil
    }

    private func failure(_ detail: String) -> TrustEvaluation {
        .failed(reason: .chainUntrusted, detail: "name constraints: " + detail)
    }
}
