import Foundation
import Testing
@testable import PinproxyCore

private typealias P = FakePKI

/// A verified chain leaf → intermediate → root whose profiles the case sets.
private func chain(leaf: CertificateProfile = .leaf(), intermediate: CertificateProfile = .ca(),
                   root: CertificateProfile = .ca(selfIssued: true), staple: StapleStatus = .notRequested) -> PeerChain {
    var l = P.leaf, i = P.intermediate, r = P.root
    l.profile = leaf; i.profile = intermediate; r.profile = root
    return PeerChain(served: [l, i], verified: [l, i, r], chainFailure: nil, signingPath: [l, i], hostMatches: true,
                     staple: staple)
}

extension CertificateProfile {
    static func leaf(key: PublicKey = .ellipticCurve("P-256"), names: [String] = ["api.example.com"],
                     eku: [String]? = [serverAuth], isCA: Bool = false, constraints: NameConstraints? = nil,
                     mustStaple: Bool = false) -> CertificateProfile {
        CertificateProfile(publicKey: key, isCA: isCA, extendedKeyUsage: eku, dnsNames: names,
                           nameConstraints: constraints, requiresOCSPStaple: mustStaple)
    }

    static func ca(key: PublicKey = .rsa(bits: 2048), selfIssued: Bool = false,
                   constraints: NameConstraints? = nil) -> CertificateProfile {
        CertificateProfile(publicKey: key, isCA: true, isSelfIssued: selfIssued, nameConstraints: constraints)
    }
}

private func permitting(_ dns: [String], excluding excluded: [String] = [], critical: Bool = true) -> NameConstraints {
    NameConstraints(isCritical: critical, hasPermittedSubtrees: !dns.isEmpty, hasExcludedSubtrees: !excluded.isEmpty,
                    permittedDNS: dns, excludedDNS: excluded)
}

/// The three chain positions a "every position" rule must be tested at.
enum Position: String, CaseIterable, Sendable { case leaf, intermediate, root }

private func chain(with key: CertificateProfile.PublicKey, at position: Position) -> PeerChain {
    switch position {
    case .leaf: chain(leaf: .leaf(key: key))
    case .intermediate: chain(intermediate: .ca(key: key))
    case .root: chain(root: .ca(key: key, selfIssued: true))
    }
}

@Suite("Web-PKI checks over the verified chain (SPEC §2.3 step 2)")
struct WebPKIEvaluatorTests {
    @Test("weak and forbidden keys are refused at every chain position",
          arguments: Position.allCases, [
            CertificateProfile.PublicKey.rsa(bits: 1024), .rsa(bits: 2047), .rsa(bits: 2052), .dsa(bits: 2048),
            .ellipticCurve("P-192"), .ellipticCurve("P-224"), .ellipticCurve("brainpoolP256r1"), .explicitCurve,
            .other("SM2"),
          ])
    func weakKeyRefused(_ position: Position, _ key: CertificateProfile.PublicKey) {
        let evaluation = PublicKeyStrengthEvaluator().evaluate(chain(with: key, at: position), now: P.now)
        #expect(evaluation.reason == .chainUntrusted)
        let subject = switch position { case .leaf: P.leaf.subject; case .intermediate: P.intermediate.subject; case .root: P.root.subject }
        if case .failed(_, let detail) = evaluation { #expect(detail.hasPrefix("certificate \(subject) has ")) }
    }

    @Test("BR keys and Edwards keys are accepted at every chain position",
          arguments: Position.allCases, [
            CertificateProfile.PublicKey.rsa(bits: 2048), .rsa(bits: 3072), .rsa(bits: 4096), .ellipticCurve("P-256"),
            .ellipticCurve("P-384"), .ellipticCurve("P-521"), .edwards("Ed25519"),
          ])
    func strongKeyAccepted(_ position: Position, _ key: CertificateProfile.PublicKey) {
        #expect(PublicKeyStrengthEvaluator().evaluate(chain(with: key, at: position), now: P.now) == .trusted)
    }

    @Test("a leaf that is a CA, or allows anyExtendedKeyUsage, is refused; without EKU it is accepted")
    func leafRole() {
        let role = CertificateRoleEvaluator()
        #expect(role.evaluate(chain(leaf: .leaf(isCA: true)), now: P.now).reason == .chainUntrusted)
        #expect(role.evaluate(chain(leaf: .leaf(eku: [CertificateProfile.serverAuth, CertificateProfile.anyExtendedKeyUsage])),
                              now: P.now).reason == .chainUntrusted)
        #expect(role.evaluate(chain(leaf: .leaf(eku: nil)), now: P.now) == .trusted)
        #expect(role.evaluate(chain(), now: P.now) == .trusted)
        // A self-signed server certificate trusted as its own anchor (the whole verified chain) may carry cA TRUE.
        var selfSigned = P.selfSigned
        selfSigned.profile = .leaf(isCA: true)
        let alone = PeerChain(served: [selfSigned], verified: [selfSigned], chainFailure: nil, signingPath: [selfSigned],
                              hostMatches: true)
        #expect(role.evaluate(alone, now: P.now) == .trusted)
    }

    /// (constraint on the intermediate, leaf SANs, refused?)
    static let nameConstraintCases: [(NameConstraints, [String], Bool)] = [
        (permitting(["example.com"]), ["api.example.com"], false),
        (permitting(["example.com"]), ["*.example.com"], false),
        (permitting(["foo.example.com"]), ["*.example.com"], true),        // cve-2025-61727 permit variant
        (permitting(["example.com"], excluding: ["bar.example.com"]), ["*.example.com"], true), // CVE-2025-61727
        (permitting([], excluding: ["bar.example.com"]), ["*.example.com"], true),
        (permitting([], excluding: ["a.bar.example.com"]), ["*.example.com"], false), // two labels below: not reachable
        (permitting([], excluding: ["example.com"]), ["*.example.com"], true),
        (permitting([], excluding: ["BAR.example.com"]), ["*.Example.com"], true),
        (permitting(["example.com"]), [".example.com"], true),             // not a DNS name
        (permitting(["example.com"]), ["foo_bar.example.com"], true),
        (permitting([".example.com"]), ["foo.example.com"], true),        // malformed constraint
        (permitting(["example.com"], critical: false), ["api.example.com"], false), // BR allows non-critical
        (NameConstraints(isCritical: true, hasPermittedSubtrees: false, hasExcludedSubtrees: false), ["api.example.com"], true),
        (NameConstraints(isCritical: true, hasPermittedSubtrees: true, hasExcludedSubtrees: false), ["foo_bar.example.com"], false), // IP-only subtrees: DNS names unconstrained
    ]

    @Test("name constraints hold for wildcard SANs and refuse malformed names and constraints", arguments: nameConstraintCases)
    func nameConstraints(_ constraints: NameConstraints, _ names: [String], _ refused: Bool) {
        let evaluation = NameConstraintEvaluator().evaluate(chain(leaf: .leaf(names: names), intermediate: .ca(constraints: constraints)),
                                                            now: P.now)
        #expect((evaluation.reason == .chainUntrusted) == refused, "\(evaluation)")
    }

    @Test("name constraints on the root bind the intermediate's SANs too; a self-issued intermediate is exempt")
    func nameConstraintsAtEveryLevel() {
        var intermediate = CertificateProfile.ca()
        intermediate.dnsNames = ["other.test"]
        let root = CertificateProfile.ca(selfIssued: true, constraints: permitting(["example.com"]))
        #expect(NameConstraintEvaluator().evaluate(chain(intermediate: intermediate, root: root), now: P.now).reason == .chainUntrusted)
        intermediate.isSelfIssued = true
        #expect(NameConstraintEvaluator().evaluate(chain(intermediate: intermediate, root: root), now: P.now) == .trusted)
    }

    @Test("name constraints in the leaf are refused")
    func nameConstraintsInLeaf() {
        let evaluation = NameConstraintEvaluator().evaluate(chain(leaf: .leaf(constraints: permitting(["example.com"]))), now: P.now)
        #expect(evaluation == .failed(reason: .chainUntrusted,
                                      detail: "name constraints: the leaf certificate CN=api.example.com carries name constraints, which only a CA may"))
    }

    @Test("a wildcard over an ICANN public suffix is refused, over a private one accepted",
          arguments: [("*.com", true), ("*.co.uk", true), ("*.uk", true), ("*.example.co.uk", false),
                      ("*.foo.ck", true), ("*.www.ck", false), ("*.s3.amazonaws.com", false),
                      ("*.unlisted-tld", true), ("*.example.com", false), ("api.com", false)])
    func wildcardSuffix(_ name: String, _ refused: Bool) {
        let evaluation = WildcardSuffixEvaluator(publicSuffixes: P.publicSuffixes)
            .evaluate(chain(leaf: .leaf(names: ["example.com", name])), now: P.now)
        #expect((evaluation.reason == .chainUntrusted) == refused, "\(evaluation)")
    }

    /// (staple, mode, must-staple, refused?)
    static let revocationCases: [(StapleStatus, OCSPStaplingMode, Bool, Bool)] = [
        (.revoked(detail: "x"), .check, false, true), (.revoked(detail: "x"), .require, false, true),
        (.revoked(detail: "x"), .off, false, false),
        (.absent, .check, false, false), (.absent, .require, false, true), (.absent, .check, true, true),
        (.unusable(detail: "x"), .check, false, false), (.unusable(detail: "x"), .require, false, true),
        (.unusable(detail: "x"), .check, true, true), (.good, .require, true, false),
        (.pending, .require, true, false), (.unavailableOffline, .require, false, false),
        (.absent, .off, true, false),
    ]

    @Test("the OCSP staple blocks when revoked, and when missing or unusable under require or must-staple",
          arguments: revocationCases)
    func staple(_ staple: StapleStatus, _ mode: OCSPStaplingMode, _ mustStaple: Bool, _ refused: Bool) {
        let evaluation = RevocationEvaluator(mode: mode).evaluate(chain(leaf: .leaf(mustStaple: mustStaple), staple: staple),
                                                                 now: P.now)
        #expect((evaluation.reason == .certificateRevoked) == refused, "\(evaluation)")
    }

    @Test("a CRL finding is certificate_revoked with its evidence")
    func crlFailure() {
        let chain = P.failedChain(.revoked(detail: "certificate CN=api.example.com is revoked by a configured CRL"),
                                  served: [P.leaf], signingPath: [P.leaf])
        #expect(ChainValidationEvaluator().evaluate(chain, now: P.now)
                == .failed(reason: .certificateRevoked, detail: "certificate CN=api.example.com is revoked by a configured CRL"))
    }
}

@Suite("Public suffix list and DNS name syntax")
struct PublicSuffixListTests {
    @Test("Punycode encodes the list's Unicode rules as certificates carry them (RFC 3492 §7.1 samples)",
          arguments: [("bücher", "bcher-kva"), ("münchen", "mnchen-3ya"), ("中国", "fiqs8s"), ("рф", "p1ai"),
                      ("ελ", "qxam")])
    func punycode(_ label: String, _ encoded: String) {
        #expect(Punycode.encode(label) == encoded)
    }

    @Test("Unicode rules match their A-labels; exception rules and the implicit * rule apply")
    func lookups() throws {
        let list = try PublicSuffixList(text: "// ===BEGIN ICANN DOMAINS===\n中国\n*.ck\n!www.ck\ncom\n// ===END ICANN DOMAINS===\n")
        #expect(list.isPublicSuffix("xn--fiqs8s"))
        #expect(list.isPublicSuffix("COM"))
        #expect(list.isPublicSuffix("foo.ck"))
        #expect(!list.isPublicSuffix("www.ck"))
        #expect(list.isPublicSuffix("unlisted"))
        #expect(!list.isPublicSuffix("example.com"))
    }

    @Test("a list without an ICANN section is refused: it would let every wildcard through")
    func emptyListRefused() {
        #expect(throws: PublicSuffixListError.self) { try PublicSuffixList(text: "com\n") }
    }

    @Test("DNS names: LDH labels only; presented names may start with one * label",
          arguments: [("example.com", true, true), ("a-b.example.com", true, true), ("*.example.com", false, true),
                      (".example.com", false, false), ("example.com.", false, false), ("foo_bar.example.com", false, false),
                      ("-a.example.com", false, false), ("a..com", false, false), ("*.com", false, false),
                      ("f*o.example.com", false, false), ("", false, false)])
    func dnsSyntax(_ name: String, _ preferred: Bool, _ presented: Bool) {
        #expect(DNSNameSyntax.isPreferredName(name) == preferred)
        #expect(DNSNameSyntax.isPresentedName(name) == presented)
    }
}
