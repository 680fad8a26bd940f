import Foundation
@testable import PinproxyRuntime

/// Certificate files for end-to-end tests, generated at test time: a real
/// chain for api.example.com (root → intermediate → leaf) and an impostor
/// chain for the same name from a second root.
struct UpstreamPKI {
    let directory: String
    let chain: TestPKI.Chain
    /// Leaf + intermediate, as the server sends them.
    let servedChainFile: String
    let keyFile: String
    let rootFile: String

    init(directory: String, name: String = "real", chain: TestPKI.Chain? = nil) throws {
        self.directory = directory
        let chain = try chain ?? TestPKI.chain()
        self.chain = chain
        servedChainFile = directory + "/\(name)-chain.pem"
        keyFile = directory + "/\(name)-key.pem"
        rootFile = directory + "/\(name)-root.pem"
        try (TestPKI.pem(chain.leaf.certificate) + TestPKI.pem(chain.intermediate.certificate))
            .write(toFile: servedChainFile, atomically: true, encoding: .utf8)
        try chain.leaf.key.pem.write(toFile: keyFile, atomically: true, encoding: .utf8)
        try TestPKI.pem(chain.root.certificate).write(toFile: rootFile, atomically: true, encoding: .utf8)
    }

    /// `sha256/…` of a certificate's SPKI.
    static func pin(_ certificate: X509Certificate) -> String {
        SPKIPinText.of(certificate)
    }
}

enum SPKIPinText {
    static func of(_ certificate: X509Certificate) -> String {
        "sha256/" + Data(certificate.facts.spkiSHA256).base64EncodedString()
    }
}
