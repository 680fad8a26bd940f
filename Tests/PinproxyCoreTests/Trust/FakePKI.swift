import Foundation
@testable import PinproxyCore

/// Hand-made certificate facts for trust tests: no parser, no files. Each
/// certificate's DER, SPKI digest and certificate digest are distinct byte
/// patterns derived from one seed, so pins name exactly one certificate.
enum FakePKI {
    /// 2026-11-30T12:00:00Z: the evaluation time of most tests.
    static let now = Date(timeIntervalSince1970: 1_796_040_000)
    static let day: TimeInterval = 86_400

    static func certificate(_ seed: UInt8, subject: String, issuer: String,
                            notBefore: Date = now - 30 * day, notAfter: Date = now + 335 * day) -> CertificateFacts {
        CertificateFacts(der: [0x30, 0x82, seed, seed &+ 1, seed &+ 2],
                         spkiSHA256: [UInt8](repeating: seed, count: 32),
                         certificateSHA256: [UInt8](repeating: seed ^ 0xFF, count: 32),
                         subject: subject, issuer: issuer, notBefore: notBefore, notAfter: notAfter)
    }

    static let leaf = certificate(0x11, subject: "CN=api.example.com", issuer: "CN=Example Intermediate")
    static let intermediate = certificate(0x22, subject: "CN=Example Intermediate", issuer: "CN=Example Root")
    static let root = certificate(0x33, subject: "CN=Example Root", issuer: "CN=Example Root")
    /// A certificate an attacker appends to the served chain; it signs nothing.
    static let appended = certificate(0x44, subject: "CN=Pinned Elsewhere", issuer: "CN=Pinned Elsewhere")
    static let selfSigned = certificate(0x55, subject: "CN=api.example.com", issuer: "CN=api.example.com")
    static let expiredLeaf = certificate(0x66, subject: "CN=api.example.com", issuer: "CN=Example Intermediate",
                                         notBefore: now - 400 * day, notAfter: now - day)
    static let futureLeaf = certificate(0x77, subject: "CN=api.example.com", issuer: "CN=Example Intermediate",
                                        notBefore: now + day, notAfter: now + 400 * day)

    /// A chain that validated: served leaf + intermediate, verified up to the root the server did not send.
    static func validChain(hostMatches: Bool = true, served: [CertificateFacts] = [leaf, intermediate]) -> PeerChain {
        PeerChain(served: served, verified: [leaf, intermediate, root], chainFailure: nil,
                  signingPath: [leaf, intermediate], hostMatches: hostMatches)
    }

    /// A chain whose path validation failed with `failure`.
    static func failedChain(_ failure: ChainFailure, served: [CertificateFacts],
                            signingPath: [CertificateFacts], hostMatches: Bool = true) -> PeerChain {
        PeerChain(served: served, verified: nil, chainFailure: failure,
                  signingPath: signingPath, hostMatches: hostMatches)
    }

    /// A few ICANN rules in the list's own format (the real list is read by the runtime tests).
    static let publicSuffixes = try! PublicSuffixList(text: """
        // ===BEGIN ICANN DOMAINS===
        com
        uk
        co.uk
        *.ck
        !www.ck
        // ===END ICANN DOMAINS===
        // ===BEGIN PRIVATE DOMAINS===
        s3.amazonaws.com
        // ===END PRIVATE DOMAINS===
        """)

    static func keyPins(_ certificates: CertificateFacts...) -> PinMaterial {
        PinMaterial(spkiDigests: certificates.map(\.spkiSHA256))
    }

    static func certificatePins(_ certificates: CertificateFacts...) -> PinMaterial {
        PinMaterial(certificateDERs: certificates.map(\.der))
    }
}
