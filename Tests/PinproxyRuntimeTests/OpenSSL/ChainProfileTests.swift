import Foundation
import Testing
import COpenSSL
import PinproxyCore
@testable import PinproxyRuntime

/// The web-PKI rules of SPEC §2.3 step 2 on real certificates, evaluated as a
/// handshake would (`OfflineHandshake`: the policy's `SSL_CTX` security
/// level, pinproxy's store flags, every extra check), at every chain position
/// a rule covers.
@Suite("Chain profiles as a handshake sees them")
struct ChainProfileTests {
    enum Position: String, CaseIterable, Sendable { case leaf, intermediate, root }

    static let keys = KeyCache()

    /// root → intermediate → leaf (api.example.com), the key at `position` of `kind`, the others P-256.
    static func evaluate(key kind: TestKey.Kind, at position: Position) throws -> TrustVerdict {
        let special = try keys.key(kind)
        let root = position == .root
            ? try TestPKI.selfSigned(name: "Profile Root", key: special)
            : try TestPKI.selfSigned(name: "Profile Root", isCA: true)
        let intermediate = position == .intermediate
            ? try TestPKI.issue(name: "Profile Intermediate", key: special, isCA: true, by: root)
            : try TestPKI.issue(name: "Profile Intermediate", isCA: true, by: root)
        let leaf = position == .leaf
            ? try TestPKI.issue(name: "api.example.com", key: special, isCA: false, names: ["DNS:api.example.com"], by: intermediate)
            : try TestPKI.issue(name: "api.example.com", isCA: false, names: ["DNS:api.example.com"], by: intermediate)
        return try evaluate([leaf.certificate, intermediate.certificate], anchor: root.certificate)
    }

    static func evaluate(_ served: [X509Certificate], anchor: X509Certificate,
                         host: String = "api.example.com") throws -> TrustVerdict {
        let directory = try TemporaryDirectory()
        let file = try directory.write(TestPKI.pem(anchor), to: "anchor.pem")
        let prepared = try PreparedPolicy(ruleName: "api.example.com", policy: TrustPolicy(kind: .anchors, anchorFiles: [file]),
                                          trustStore: try TrustStore.anchors([]), publicSuffixes: try LimboCase.publicSuffixes())
        return try OfflineHandshake.evaluate(served, host: HostName(host)!, port: 443, policy: prepared, at: nil)
    }

    @Test("RSA below 2048 bits or not a multiple of 8, P-192 and DSA are refused at every position",
          arguments: [TestKey.Kind.rsa1024, .rsa2052, .ecP192, .dsa2048], Position.allCases)
    func weakKeys(_ kind: TestKey.Kind, _ position: Position) throws {
        let verdict = try Self.evaluate(key: kind, at: position)
        #expect(verdict.decision.reason == .chainUntrusted, "\(verdict.decision)")
    }

    @Test("RSA-2048, P-384 and Ed25519 are accepted at every position",
          arguments: [TestKey.Kind.rsa2048, .ecP384, .ed25519], Position.allCases)
    func strongKeys(_ kind: TestKey.Kind, _ position: Position) throws {
        let verdict = try Self.evaluate(key: kind, at: position)
        #expect(verdict.decision == .allow, "\(verdict.decision)")
    }

    @Test("CVE-2025-61727: a wildcard leaf under an intermediate that excludes one name it covers is refused")
    func wildcardEscapesExclusion() throws {
        let root = try TestPKI.selfSigned(name: "NC Root", isCA: true)
        let constrained = try TestPKI.issue(name: "NC Intermediate", isCA: true,
                                            extensions: [(NID_name_constraints, "critical,permitted;DNS:example.com,excluded;DNS:bar.example.com")],
                                            by: root)
        let leaf = try TestPKI.issue(name: "wildcard", isCA: false, names: ["DNS:*.example.com"], by: constrained)
        let served = [leaf.certificate, constrained.certificate]
        let excluded = try Self.evaluate(served, anchor: root.certificate, host: "bar.example.com")
        #expect(excluded.decision.reason == .chainUntrusted)
        #expect(excluded.decision.detail?.contains("reaches the excluded subtree \"bar.example.com\"") == true)
        // The same wildcard under a constraint it does not escape is fine.
        let open = try TestPKI.issue(name: "Open Intermediate", isCA: true,
                                     extensions: [(NID_name_constraints, "critical,permitted;DNS:example.com")], by: root)
        let fine = try TestPKI.issue(name: "wildcard", isCA: false, names: ["DNS:*.example.com"], by: open)
        #expect(try Self.evaluate([fine.certificate, open.certificate], anchor: root.certificate,
                                  host: "foo.example.com").decision == .allow)
    }

    @Test("a leaf with basicConstraints cA TRUE is refused; a wildcard over a public suffix is refused")
    func leafRules() throws {
        let root = try TestPKI.selfSigned(name: "Leaf Rules Root", isCA: true)
        let intermediate = try TestPKI.issue(name: "Leaf Rules Intermediate", isCA: true, by: root)
        // cA TRUE without keyCertSign (webpki::ee-basicconstraints-ca): OpenSSL's ssl_server purpose accepts it.
        let caLeaf = try TestPKI.issue(name: "api.example.com", isCA: false, names: ["DNS:api.example.com"],
                                       extensions: [(NID_basic_constraints, "critical,CA:TRUE")], by: intermediate)
        let refused = try Self.evaluate([caLeaf.certificate, intermediate.certificate], anchor: root.certificate)
        #expect(refused.decision == .block(reason: .chainUntrusted,
                                           detail: "the leaf certificate CN=api.example.com is a CA certificate (basicConstraints cA TRUE)"))
        let suffix = try TestPKI.issue(name: "co.uk wildcard", isCA: false, names: ["DNS:*.co.uk"], by: intermediate)
        let verdict = try Self.evaluate([suffix.certificate, intermediate.certificate], anchor: root.certificate,
                                        host: "foo.co.uk")
        #expect(verdict.decision.reason == .chainUntrusted)
        #expect(verdict.decision.detail?.contains("over the public suffix \"co.uk\"") == true)
    }

    /// badssl.com's CA configuration (certs/src/conf/ca-root.conf, ca-intermediate.conf,
    /// wildcard-main.conf): OpenSSL's usual profile, with nothing marked critical and no EKU.
    @Test("a private CA with badssl.com's profile (basicConstraints not critical on root and intermediate) is accepted")
    func badsslProfile() throws {
        let caExtensions: [(Int32, String)] = [
            (NID_basic_constraints, "CA:true"), (NID_key_usage, "cRLSign,keyCertSign"),
            (NID_subject_key_identifier, "hash"), (NID_authority_key_identifier, "keyid:always,issuer:always"),
        ]
        let root = try TestPKI.selfSigned(name: "BadSSL Root Certificate Authority", key: try Self.keys.key(.rsa4096),
                                          extensions: caExtensions)
        let intermediate = try TestPKI.issue(name: "BadSSL Intermediate Certificate Authority", key: try Self.keys.key(.rsa2048),
                                             isCA: true, extensions: caExtensions, by: root)
        // An empty value drops TestPKI's default EKU: badssl.com's leaves have none.
        let leafExtensions: [(Int32, String)] = [
            (NID_basic_constraints, "CA:FALSE"), (NID_key_usage, "nonRepudiation,digitalSignature,keyEncipherment"),
            (NID_ext_key_usage, ""),
        ]
        let leaf = try TestPKI.issue(name: "*.badssl.example.com", isCA: false,
                                     names: ["DNS:*.badssl.example.com", "DNS:badssl.example.com"],
                                     extensions: leafExtensions, by: intermediate)
        let verdict = try Self.evaluate([leaf.certificate, intermediate.certificate], anchor: root.certificate,
                                        host: "sha256.badssl.example.com")
        #expect(verdict.decision == .allow, "\(verdict.decision)")
    }

    @Test("Debian's public suffix list is read with its Unicode rules and without its private section")
    func debianList() throws {
        let list = try LimboCase.publicSuffixes()
        #expect(list.isPublicSuffix("co.uk"))
        #expect(list.isPublicSuffix("xn--fiqs8s"))   // 中国
        #expect(!list.isPublicSuffix("s3.amazonaws.com"))
        #expect(!list.isPublicSuffix("github.io"))
        #expect(!list.isPublicSuffix("example.co.uk"))
    }
}
