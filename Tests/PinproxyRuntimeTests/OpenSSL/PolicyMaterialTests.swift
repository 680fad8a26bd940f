import Foundation
import Testing
import PinproxyCore
import COpenSSL
@testable import PinproxyRuntime

@Suite("PolicyMaterial")
struct PolicyMaterialTests {
    @Test("public_keys files of PUBLIC KEY and CERTIFICATE blocks become SPKI digests after the inline pins")
    func publicKeysBecomeDigests() throws {
        let directory = try TemporaryDirectory()
        let chain = try TestPKI.chain()
        let keyPEM = TestPKI.pem { PEM_write_bio_PUBKEY($0, chain.root.key.pointer) }
        let keys = try directory.write(keyPEM + TestPKI.pem(chain.leaf.certificate), to: "keys.pem")
        let inline = try #require(SPKIPin(digest: [UInt8](repeating: 7, count: 32)))
        let material = try PolicyMaterial.load(for: TrustPolicy(kind: .pinPublicKeys, pins: [inline], publicKeyFiles: [keys]))
        #expect(material.pinnedSPKIDigests == [inline.digest, chain.root.certificate.facts.spkiSHA256,
                                                chain.leaf.certificate.facts.spkiSHA256])
    }

    @Test("a client key that does not match the client certificate is refused, naming the key file")
    func mismatchedClientKeyIsRefused() throws {
        let directory = try TemporaryDirectory()
        let identity = try TestPKI.selfSigned(name: "client", isCA: false)
        let certificate = try directory.write(TestPKI.pem(identity.certificate), to: "client.pem")
        let otherKey = try directory.write(TestKey(.ecP256).pem, to: "other.key")
        let policy = TrustPolicy(kind: .default, clientCredentials: .init(certificatePath: certificate, keyPath: otherKey))
        #expect(throws: FileLoadError(path: otherKey, problem: "does not match the certificate in \(certificate)")) {
            try PolicyMaterial.load(for: policy)
        }
    }
}
