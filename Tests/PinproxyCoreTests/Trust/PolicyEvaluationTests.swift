import Foundation
import Testing
@testable import PinproxyCore

/// One row of the SPEC §2.3 decision table: a handshake, a policy, and the
/// exact decision pinproxy must reach.
struct PolicyCase: Sendable, CustomTestStringConvertible {
    let name: String
    let chain: PeerChain
    let policy: TrustPolicy
    let material: PinMaterial
    var now: Date = FakePKI.now
    let expected: TrustDecision

    var testDescription: String { name }

    /// The evaluation the decision implies: the same reason and detail.
    var expectedEvaluation: TrustEvaluation {
        switch expected {
        case .allow: .trusted
        case .allowAndReport(let reason, let detail), .block(let reason, let detail):
            .failed(reason: reason, detail: detail)
        }
    }
}

private typealias P = FakePKI

private let keyMismatch = "no certificate in the validated chain matches a pinned public key"
private let keyMismatchOnPath = "no certificate in the leaf's signing path matches a pinned public key"
private let certificateMismatch = "no certificate in the validated chain is a pinned certificate"
private let hostMismatch = "the leaf certificate CN=api.example.com does not match the upstream host name"
private let selfSignedUntrusted = "chain not trusted: self-signed certificate"

private func pinKeys(validateChain: Bool = true, validateHost: Bool = true, enforce: Bool = true,
                     expires: PinExpiry? = nil) -> TrustPolicy {
    TrustPolicy(kind: .pinPublicKeys, validateChain: validateChain, validateHost: validateHost,
                enforce: enforce, expires: expires)
}

private func pinCertificates(validateChain: Bool = true) -> TrustPolicy {
    TrustPolicy(kind: .pinCertificates, validateChain: validateChain)
}

private let selfSignedChain = P.failedChain(.untrusted(detail: "self-signed certificate"),
                                            served: [P.selfSigned], signingPath: [P.selfSigned])
private let expiredChain = P.failedChain(.expired, served: [P.expiredLeaf, P.intermediate],
                                         signingPath: [P.expiredLeaf, P.intermediate])
private let expiredDetail = "certificate CN=api.example.com expired at 2026-11-29T12:00:00Z"
/// 2026-11-30: pins apply through 23:59:59.999 on that day.
private let expiresToday = PinExpiry(year: 2026, month: 11, day: 30)!
private let endOfToday = Date(timeIntervalSince1970: 1_796_083_200)  // 2026-12-01T00:00:00Z

let policyCases: [PolicyCase] = [
    // Key pins matched against the verified chain.
    PolicyCase(name: "pinned leaf key is accepted", chain: P.validChain(), policy: pinKeys(),
               material: P.keyPins(P.leaf), expected: .allow),
    PolicyCase(name: "pinned intermediate key is accepted", chain: P.validChain(), policy: pinKeys(),
               material: P.keyPins(P.intermediate), expected: .allow),
    PolicyCase(name: "pinned root key that the server does not send is accepted", chain: P.validChain(),
               policy: pinKeys(), material: P.keyPins(P.root), expected: .allow),
    PolicyCase(name: "backup pin alone is enough", chain: P.validChain(), policy: pinKeys(),
               material: P.keyPins(P.appended, P.root), expected: .allow),
    PolicyCase(name: "wrong pin is blocked", chain: P.validChain(), policy: pinKeys(),
               material: P.keyPins(P.appended), expected: .block(reason: .pinMismatch, detail: keyMismatch)),
    PolicyCase(name: "empty pin set is blocked", chain: P.validChain(), policy: pinKeys(),
               material: PinMaterial(), expected: .block(reason: .pinMismatch, detail: keyMismatch)),
    PolicyCase(name: "inline policy pins count without resolved material",
               chain: P.validChain(),
               policy: TrustPolicy(kind: .pinPublicKeys, pins: [SPKIPin(digest: P.leaf.spkiSHA256)!]),
               material: PinMaterial(), expected: .allow),
    PolicyCase(name: "pinned certificate appended to the served chain is blocked",
               chain: P.validChain(served: [P.leaf, P.intermediate, P.appended]), policy: pinKeys(),
               material: P.keyPins(P.appended), expected: .block(reason: .pinMismatch, detail: keyMismatch)),
    PolicyCase(name: "appended pinned certificate is blocked without chain validation too",
               chain: P.validChain(served: [P.leaf, P.intermediate, P.appended]), policy: pinKeys(validateChain: false),
               material: P.keyPins(P.appended), expected: .block(reason: .pinMismatch, detail: keyMismatchOnPath)),
    PolicyCase(name: "root pin is not on the signing path without chain validation",
               chain: P.validChain(), policy: pinKeys(validateChain: false),
               material: P.keyPins(P.root), expected: .block(reason: .pinMismatch, detail: keyMismatchOnPath)),

    // Validity time.
    PolicyCase(name: "expired chain is blocked under default", chain: expiredChain, policy: .standard,
               material: PinMaterial(), expected: .block(reason: .certificateExpired, detail: expiredDetail)),
    PolicyCase(name: "expired chain is blocked despite a matching pin", chain: expiredChain, policy: pinKeys(),
               material: P.keyPins(P.expiredLeaf), expected: .block(reason: .certificateExpired, detail: expiredDetail)),
    PolicyCase(name: "expired chain is accepted without chain validation when the pin is on the signing path",
               chain: expiredChain, policy: pinKeys(validateChain: false),
               material: P.keyPins(P.intermediate), expected: .allow),
    PolicyCase(name: "expired chain without chain validation is blocked when the pin is elsewhere",
               chain: expiredChain, policy: pinKeys(validateChain: false), material: P.keyPins(P.root),
               expected: .block(reason: .pinMismatch, detail: keyMismatchOnPath)),
    PolicyCase(name: "not-yet-valid chain is blocked",
               chain: P.failedChain(.notYetValid, served: [P.futureLeaf, P.intermediate],
                                    signingPath: [P.futureLeaf, P.intermediate]),
               policy: .standard, material: PinMaterial(),
               expected: .block(reason: .certificateNotYetValid,
                                detail: "certificate CN=api.example.com is not valid before 2026-12-01T12:00:00Z")),

    // Host name.
    PolicyCase(name: "wrong host is blocked even with a matching pin", chain: P.validChain(hostMatches: false),
               policy: pinKeys(), material: P.keyPins(P.leaf),
               expected: .block(reason: .hostnameMismatch, detail: hostMismatch)),
    PolicyCase(name: "wrong host is blocked under default", chain: P.validChain(hostMatches: false),
               policy: .standard, material: PinMaterial(),
               expected: .block(reason: .hostnameMismatch, detail: hostMismatch)),
    PolicyCase(name: "validate_host false accepts a wrong host with a matching pin",
               chain: P.validChain(hostMatches: false), policy: pinKeys(validateHost: false),
               material: P.keyPins(P.leaf), expected: .allow),
    PolicyCase(name: "validate_host false accepts a wrong host under default",
               chain: P.validChain(hostMatches: false), policy: TrustPolicy(kind: .default, validateHost: false),
               material: PinMaterial(), expected: .allow),
    PolicyCase(name: "wrong host is checked before pins", chain: P.validChain(hostMatches: false),
               policy: pinKeys(), material: P.keyPins(P.appended),
               expected: .block(reason: .hostnameMismatch, detail: hostMismatch)),

    // Self-signed, anchors, disable.
    PolicyCase(name: "self-signed server is blocked under default", chain: selfSignedChain, policy: .standard,
               material: PinMaterial(), expected: .block(reason: .chainUntrusted, detail: selfSignedUntrusted)),
    PolicyCase(name: "pinned self-signed server is accepted without chain validation", chain: selfSignedChain,
               policy: pinKeys(validateChain: false), material: P.keyPins(P.selfSigned), expected: .allow),
    PolicyCase(name: "pinned self-signed certificate is accepted without chain validation", chain: selfSignedChain,
               policy: pinCertificates(validateChain: false), material: P.certificatePins(P.selfSigned),
               expected: .allow),
    PolicyCase(name: "pinned self-signed server is blocked when the chain is validated", chain: selfSignedChain,
               policy: pinKeys(), material: P.keyPins(P.selfSigned),
               expected: .block(reason: .chainUntrusted, detail: selfSignedUntrusted)),
    PolicyCase(name: "chain is checked before host and pins",
               chain: P.failedChain(.untrusted(detail: "unable to get local issuer certificate"),
                                    served: [P.leaf], signingPath: [P.leaf], hostMatches: false),
               policy: pinKeys(), material: P.keyPins(P.appended),
               expected: .block(reason: .chainUntrusted, detail: "chain not trusted: unable to get local issuer certificate")),
    PolicyCase(name: "anchors accepts a chain validated against the anchors", chain: P.validChain(),
               policy: TrustPolicy(kind: .anchors, anchorFiles: ["/corp-root.pem"]), material: PinMaterial(),
               expected: .allow),
    PolicyCase(name: "anchors blocks a chain that does not end at an anchor", chain: selfSignedChain,
               policy: TrustPolicy(kind: .anchors, anchorFiles: ["/corp-root.pem"]), material: PinMaterial(),
               expected: .block(reason: .chainUntrusted, detail: selfSignedUntrusted)),
    PolicyCase(name: "anchors ignores validate_chain false", chain: selfSignedChain,
               policy: TrustPolicy(kind: .anchors, validateChain: false), material: PinMaterial(),
               expected: .block(reason: .chainUntrusted, detail: selfSignedUntrusted)),
    PolicyCase(name: "anchors checks the host", chain: P.validChain(hostMatches: false),
               policy: TrustPolicy(kind: .anchors), material: PinMaterial(),
               expected: .block(reason: .hostnameMismatch, detail: hostMismatch)),
    PolicyCase(name: "disable accepts an untrusted chain for another host",
               chain: P.failedChain(.untrusted(detail: "self-signed certificate"), served: [P.selfSigned],
                                    signingPath: [P.selfSigned], hostMatches: false),
               policy: TrustPolicy(kind: .disable), material: P.keyPins(P.root), expected: .allow),

    // Report-only covers every reason.
    PolicyCase(name: "report-only pin mismatch is allowed and reported", chain: P.validChain(),
               policy: pinKeys(enforce: false), material: P.keyPins(P.appended),
               expected: .allowAndReport(reason: .pinMismatch, detail: keyMismatch)),
    PolicyCase(name: "report-only untrusted chain is allowed and reported", chain: selfSignedChain,
               policy: TrustPolicy(kind: .default, enforce: false), material: PinMaterial(),
               expected: .allowAndReport(reason: .chainUntrusted, detail: selfSignedUntrusted)),
    PolicyCase(name: "report-only host mismatch is allowed and reported", chain: P.validChain(hostMatches: false),
               policy: pinKeys(enforce: false), material: P.keyPins(P.leaf),
               expected: .allowAndReport(reason: .hostnameMismatch, detail: hostMismatch)),
    PolicyCase(name: "report-only expired chain is allowed and reported", chain: expiredChain,
               policy: TrustPolicy(kind: .default, enforce: false), material: PinMaterial(),
               expected: .allowAndReport(reason: .certificateExpired, detail: expiredDetail)),
    PolicyCase(name: "report-only trusted chain is simply allowed", chain: P.validChain(),
               policy: pinKeys(enforce: false), material: P.keyPins(P.leaf), expected: .allow),

    // Expired pin sets.
    PolicyCase(name: "pins apply until the last instant of the expiry day", chain: P.validChain(),
               policy: pinKeys(expires: expiresToday), material: P.keyPins(P.appended),
               now: endOfToday - 0.001, expected: .block(reason: .pinMismatch, detail: keyMismatch)),
    PolicyCase(name: "pins are ignored from midnight after the expiry day", chain: P.validChain(),
               policy: pinKeys(expires: expiresToday), material: P.keyPins(P.appended),
               now: endOfToday, expected: .allow),
    PolicyCase(name: "expired pin set still enforces the chain", chain: selfSignedChain,
               policy: pinKeys(expires: expiresToday), material: P.keyPins(P.selfSigned), now: endOfToday,
               expected: .block(reason: .chainUntrusted, detail: selfSignedUntrusted)),
    PolicyCase(name: "expired pin set still enforces the host", chain: P.validChain(hostMatches: false),
               policy: pinKeys(expires: expiresToday), material: P.keyPins(P.leaf), now: endOfToday,
               expected: .block(reason: .hostnameMismatch, detail: hostMismatch)),
    PolicyCase(name: "expired pin set without chain validation falls back to chain validation",
               chain: selfSignedChain, policy: pinKeys(validateChain: false, expires: expiresToday),
               material: P.keyPins(P.selfSigned), now: endOfToday,
               expected: .block(reason: .chainUntrusted, detail: selfSignedUntrusted)),
    PolicyCase(name: "unexpired pin set without chain validation accepts the pinned self-signed server",
               chain: selfSignedChain, policy: pinKeys(validateChain: false, expires: expiresToday),
               material: P.keyPins(P.selfSigned), now: endOfToday - 0.001, expected: .allow),

    // Certificate pins: whole-DER byte equality.
    PolicyCase(name: "pinned leaf certificate is accepted", chain: P.validChain(), policy: pinCertificates(),
               material: P.certificatePins(P.leaf), expected: .allow),
    PolicyCase(name: "pinned root certificate that the server does not send is accepted", chain: P.validChain(),
               policy: pinCertificates(), material: P.certificatePins(P.root), expected: .allow),
    PolicyCase(name: "certificate differing in its last byte is blocked", chain: P.validChain(),
               policy: pinCertificates(), material: PinMaterial(certificateDERs: [P.leaf.der.dropLast() + [0x00]]),
               expected: .block(reason: .pinMismatch, detail: certificateMismatch)),
    PolicyCase(name: "certificate that is a prefix of the leaf is blocked", chain: P.validChain(),
               policy: pinCertificates(), material: PinMaterial(certificateDERs: [Array(P.leaf.der.dropLast())]),
               expected: .block(reason: .pinMismatch, detail: certificateMismatch)),
    PolicyCase(name: "certificate pins ignore key pins", chain: P.validChain(), policy: pinCertificates(),
               material: P.keyPins(P.leaf), expected: .block(reason: .pinMismatch, detail: certificateMismatch)),
    PolicyCase(name: "appended pinned certificate is blocked", chain: P.validChain(served: [P.leaf, P.appended]),
               policy: pinCertificates(), material: P.certificatePins(P.appended),
               expected: .block(reason: .pinMismatch, detail: certificateMismatch)),
]

@Suite("Policy evaluation (SPEC §2.3)")
struct PolicyEvaluationTests {
    @Test("every policy case reaches its exact evaluation and decision", arguments: policyCases)
    func decides(_ row: PolicyCase) {
        let check = TrustCheck(policy: row.policy, material: row.material, publicSuffixes: P.publicSuffixes)
        let verdict = check.verdict(for: row.chain, now: row.now)
        #expect(verdict.decision == row.expected)
        #expect(verdict.evaluation == row.expectedEvaluation)
        #expect(verdict.chain == row.chain)
    }

    @Test("a built evaluator switches from pinned to unpinned at the expiry instant")
    func evaluatorIsReusableAcrossExpiry() {
        let evaluator = PolicyEvaluation.evaluator(for: pinKeys(expires: expiresToday), material: P.keyPins(P.appended),
                                                   publicSuffixes: P.publicSuffixes)
        #expect(evaluator.evaluate(P.validChain(), now: endOfToday - 0.001)
                == .failed(reason: .pinMismatch, detail: keyMismatch))
        #expect(evaluator.evaluate(P.validChain(), now: endOfToday) == .trusted)
    }
}
