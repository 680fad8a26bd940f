import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

@Suite("X509Certificate")
struct X509CertificateTests {
    /// Runs a shell pipeline (the openssl CLI) and returns its standard output.
    private func shell(_ command: String) throws -> String {
        try ChildProcess.shell(command).output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("the SPKI SHA-256 equals the openssl CLI's pin of the same certificate", arguments: TestKey.Kind.allCases)
    func spkiDigestMatchesCLI(kind: TestKey.Kind) throws {
        let directory = try TemporaryDirectory()
        let identity = try TestPKI.selfSigned(name: "pin.example", kind: kind, isCA: false, names: ["DNS:pin.example"])
        let file = try directory.write(TestPKI.pem(identity.certificate), to: "cert.pem")
        let expected = try shell("openssl x509 -in \(file) -pubkey -noout | openssl pkey -pubin -outform der"
                                 + " | openssl dgst -sha256 -r | cut -d' ' -f1")
        let facts = identity.certificate.facts
        #expect(facts.spkiSHA256.map { String(format: "%02x", $0) }.joined() == expected)
        let certificateDigest = try shell("openssl x509 -in \(file) -outform der | openssl dgst -sha256 -r | cut -d' ' -f1")
        #expect(facts.certificateSHA256.map { String(format: "%02x", $0) }.joined() == certificateDigest)
    }

    @Test("facts carry RFC 2253 names, validity dates and the DER bytes")
    func factsDescribeTheCertificate() throws {
        let chain = try TestPKI.chain(validity: .init(notBefore: -3600, notAfter: 86_400))
        let facts = chain.leaf.certificate.facts
        #expect(facts.subject == "CN=api.example.com")
        #expect(facts.issuer == "CN=Test Intermediate CA")
        #expect(abs(facts.notBefore.timeIntervalSinceNow + 3600) < 60)
        #expect(abs(facts.notAfter.timeIntervalSinceNow - 86_400) < 60)
        let reparsed = try #require(X509Certificate(der: facts.der))
        #expect(reparsed.isSame(as: chain.leaf.certificate))
    }

    @Test("a PEM file with several certificates and a DER file both load")
    func loadsPEMBundlesAndDER() throws {
        let directory = try TemporaryDirectory()
        let chain = try TestPKI.chain()
        let bundle = try directory.write(TestPKI.pem(chain.leaf.certificate) + TestPKI.pem(chain.intermediate.certificate),
                                         to: "bundle.pem")
        let loaded = try X509Certificate.load(contentsOf: bundle)
        #expect(loaded.map(\.facts.subject) == ["CN=api.example.com", "CN=Test Intermediate CA"])
        let derPath = directory.path + "/root.der"
        try Data(chain.root.certificate.der).write(to: URL(fileURLWithPath: derPath))
        #expect(try X509Certificate.load(contentsOf: derPath).map(\.facts.subject) == ["CN=Test Root CA"])
    }

    @Test("a file without a certificate fails with an error naming the file")
    func badFileNamesItself() throws {
        let directory = try TemporaryDirectory()
        let key = try TestKey(.ecP256)
        let path = try directory.write(key.pem, to: "only-a-key.pem")
        #expect(throws: FileLoadError(path: path, problem: "holds no CERTIFICATE block")) {
            try X509Certificate.load(contentsOf: path)
        }
        let missing = directory.path + "/missing.pem"
        #expect(throws: FileLoadError(path: missing, problem: "cannot be read (missing or no permission)")) {
            try X509Certificate.load(contentsOf: missing)
        }
    }
}

extension FileLoadError: Equatable {
    public static func == (lhs: FileLoadError, rhs: FileLoadError) -> Bool {
        lhs.path == rhs.path && lhs.problem == rhs.problem
    }
}
