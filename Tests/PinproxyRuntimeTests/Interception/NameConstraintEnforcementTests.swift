import Foundation
import PinproxyCore
@testable import PinproxyRuntime
import Testing

/// The CA's blast radius (SPEC §3.1): leaves for its names verify under
/// OpenSSL, Go and Java; a leaf for any other name, signed with the very same
/// issuing key (by `openssl x509 -req`, bypassing pinproxy's own scope
/// check), is refused by each of them because of the name constraints.
@Suite("interception CA: the name constraints hold in OpenSSL, Go and Java")
struct NameConstraintEnforcementTests {
    /// One CA, and the leaves under test written out as PEM files.
    final class Bed {
        let ca: TestCA
        var root: String { ca.file("root.pem") }
        var issuing: String { ca.file("issuing.pem") }

        init() throws {
            ca = try TestCA(names: ["api.example.com", "example.org"])
        }

        /// A leaf pinproxy mints (its scope check passed).
        func minted(_ host: String) throws -> String {
            let leaf = try ca.authority.leaf(for: try #require(HostName(host)))
            let path = ca.scratch.file("minted-\(host).pem")
            try Data(leaf.certificate.pem).write(to: URL(fileURLWithPath: path))
            return path
        }

        /// A leaf for `san` (`DNS:…` or `IP:…`) signed by `openssl x509 -req`
        /// with the CA's issuing key: what a thief of that key could make.
        func forged(_ san: String) throws -> String {
            let name = san.replacingOccurrences(of: ":", with: "-")
            let key = ca.scratch.file("forged-\(name).key"), request = ca.scratch.file("forged-\(name).csr")
            let leaf = ca.scratch.file("forged-\(name).pem"), extensions = ca.scratch.file("forged-\(name).cnf")
            try """
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature
            extendedKeyUsage = serverAuth
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid
            subjectAltName = \(san)
            """.write(toFile: extensions, atomically: true, encoding: .utf8)
            let host = String(san.split(separator: ":", maxSplits: 1)[1])
            let steps: [[String]] = [
                ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                 "-subj", "/CN=\(host)", "-out", request],
                ["x509", "-req", "-in", request, "-CA", issuing, "-CAkey", ca.file("issuing.key"), "-set_serial", "0x5eed",
                 "-days", "7", "-sha256", "-extfile", extensions, "-out", leaf],
            ]
            for step in steps {
                let result = try ChildProcess.run("/usr/bin/openssl", step)
                guard result.status == 0 else { throw TestFailure("openssl \(step[0]): \(result.combinedOutput)") }
            }
            return leaf
        }
    }

    static let goMissing = "go is not installed (Debian golang-go; `make test` installs it)"
    static let javaMissing = "java is not installed (Debian default-jre-headless; `make test` installs it)"

    // MARK: OpenSSL

    @Test("openssl verify accepts minted leaves for a listed name and for a name below a listed one",
          arguments: ["api.example.com", "www.example.org", "example.org"])
    func openSSLAcceptsListed(host: String) throws {
        let bed = try Bed()
        let verdict = try ChainVerifiers.openSSL(root: bed.root, intermediate: bed.issuing, leaf: try bed.minted(host), host: host)
        #expect(verdict.accepted, "\(verdict.output)")
    }

    @Test("openssl verify refuses a forged leaf for an unlisted name (permitted subtree violation)",
          arguments: ["evil.example.net", "example.com", "www.example.com", "badexample.org"])
    func openSSLRefusesUnlisted(host: String) throws {
        let bed = try Bed()
        let verdict = try ChainVerifiers.openSSL(root: bed.root, intermediate: bed.issuing, leaf: try bed.forged("DNS:\(host)"), host: host)
        #expect(!verdict.accepted)
        #expect(verdict.output.contains("permitted subtree violation"), "\(verdict.output)")
    }

    @Test("openssl verify refuses a forged leaf for an IP address (excluded subtree violation)", arguments: ["127.0.0.1", "::1"])
    func openSSLRefusesIP(address: String) throws {
        let bed = try Bed()
        let verdict = try ChainVerifiers.openSSL(root: bed.root, intermediate: bed.issuing, leaf: try bed.forged("IP:\(address)"), host: address)
        #expect(!verdict.accepted)
        #expect(verdict.output.contains("excluded subtree violation"), "\(verdict.output)")
    }

    @Test("the forgery itself is sound: the same forged leaf for a listed name passes openssl verify")
    func forgeryControl() throws {
        let bed = try Bed()
        let verdict = try ChainVerifiers.openSSL(root: bed.root, intermediate: bed.issuing,
                                                 leaf: try bed.forged("DNS:api.example.com"), host: "api.example.com")
        #expect(verdict.accepted, "\(verdict.output)")
    }

    // MARK: Go

    @Test("Go's x509 Verify accepts minted leaves for listed names", .enabled(if: ChainVerifiers.goTool != nil, Comment(rawValue: goMissing)),
          arguments: ["api.example.com", "www.example.org"])
    func goAcceptsListed(host: String) throws {
        let bed = try Bed()
        let verdict = try ChainVerifiers.go(root: bed.root, intermediate: bed.issuing, leaf: try bed.minted(host), host: host)
        #expect(verdict.accepted, "\(verdict.output)")
    }

    @Test("Go's x509 Verify refuses forged leaves for an unlisted name and for an IP address",
          .enabled(if: ChainVerifiers.goTool != nil, Comment(rawValue: goMissing)),
          arguments: ["DNS:evil.example.net", "DNS:www.example.com", "IP:127.0.0.1"])
    func goRefusesUnlisted(san: String) throws {
        let bed = try Bed()
        let host = String(san.split(separator: ":", maxSplits: 1)[1])
        let verdict = try ChainVerifiers.go(root: bed.root, intermediate: bed.issuing, leaf: try bed.forged(san), host: host)
        #expect(!verdict.accepted)
        #expect(verdict.output.contains("not authorized to sign for this name"), "\(verdict.output)")
    }

    // MARK: Java

    @Test("Java's PKIX CertPathValidator accepts a minted leaf for a listed name",
          .enabled(if: ChainVerifiers.javaTool != nil, Comment(rawValue: javaMissing)))
    func javaAcceptsListed() throws {
        let bed = try Bed()
        let verdict = try ChainVerifiers.java(root: bed.root, intermediate: bed.issuing, leaf: try bed.minted("api.example.com"))
        #expect(verdict.accepted, "\(verdict.output)")
    }

    @Test("Java's PKIX CertPathValidator refuses forged leaves for an unlisted name and an IP: the issuing certificate's constraints",
          .enabled(if: ChainVerifiers.javaTool != nil, Comment(rawValue: javaMissing)),
          arguments: ["DNS:evil.example.net", "IP:127.0.0.1"])
    func javaRefusesUnlisted(san: String) throws {
        let bed = try Bed()
        let verdict = try ChainVerifiers.java(root: bed.root, intermediate: bed.issuing, leaf: try bed.forged(san))
        #expect(!verdict.accepted)
        #expect(verdict.output.contains("REJECTED: "), "\(verdict.output)")
        print("Java on a forged \(san) leaf: \(verdict.output)")
    }

    @Test("why the issuing certificate carries the constraints too: with them on the root only, Java accepts an unlisted leaf that OpenSSL refuses",
          .enabled(if: ChainVerifiers.javaTool != nil, Comment(rawValue: javaMissing)))
    func javaIgnoresRootConstraints() throws {
        let scratch = try TemporaryDirectory()
        let now = Date()
        let rootKey = try PrivateKey.generateP256(), issuingKey = try PrivateKey.generateP256(), leafKey = try PrivateKey.generateP256()
        let usage = try EncodedExtension(.keyUsage([.keyCertSign, .cRLSign]))
        let root = try X509Certificate.sign(CertificateRequest(
            serialNumber: [1], commonName: "root with constraints", organization: nil, notBefore: now - 60, notAfter: now + 86_400,
            subjectKey: try CertificatePublicKey(of: rootKey), extensions: [
                try EncodedExtension(.basicConstraints(isCA: true, pathLength: 1)), usage,
                try EncodedExtension(.subjectKeyIdentifier(try rootKey.keyIdentifier())),
                try EncodedExtension(.nameConstraints(permittedDNS: ["api.example.com"], excludedIPRanges: [])),
            ]), issuer: nil, key: try CertificateSigningKey(rootKey))
        let issuing = try X509Certificate.sign(CertificateRequest(
            serialNumber: [2], commonName: "intermediate without constraints", organization: nil, notBefore: now - 60,
            notAfter: now + 86_400, subjectKey: try CertificatePublicKey(of: issuingKey), extensions: [
                try EncodedExtension(.basicConstraints(isCA: true, pathLength: 0)), usage,
                try EncodedExtension(.subjectKeyIdentifier(try issuingKey.keyIdentifier())),
                try EncodedExtension(.authorityKeyIdentifier(try rootKey.keyIdentifier())),
            ]), issuer: root, key: try CertificateSigningKey(rootKey))
        let leaf = try LeafIssuer(issuing: issuing, issuingKey: issuingKey, leafKey: leafKey)
            .mint(for: try #require(HostName("evil.example.net")), at: now)
        let paths = ["root.pem": root.pem, "issuing.pem": issuing.pem, "leaf.pem": leaf.certificate.pem].mapValues { bytes in
            { (name: String) -> String in
                let path = scratch.file(name)
                _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
                return path
            }
        }.reduce(into: [String: String]()) { $0[$1.key] = $1.value($1.key) }
        let java = try ChainVerifiers.java(root: paths["root.pem"]!, intermediate: paths["issuing.pem"]!, leaf: paths["leaf.pem"]!)
        #expect(java.accepted, "Java applied the root's constraints after all: \(java.output)")
        let openSSL = try ChainVerifiers.openSSL(root: paths["root.pem"]!, intermediate: paths["issuing.pem"]!,
                                                 leaf: paths["leaf.pem"]!, host: "evil.example.net")
        #expect(!openSSL.accepted && openSSL.output.contains("permitted subtree violation"), "\(openSSL.output)")
    }
}
