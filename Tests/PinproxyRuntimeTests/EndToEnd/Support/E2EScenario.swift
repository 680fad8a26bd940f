import Foundation
@testable import PinproxyRuntime

/// One end-to-end setup: a real TLS server (upstream.py) serving the given
/// certificates, and pinproxy in process with `api.example.com:443` resolved to
/// it (and any other `resolving` names), a trust store of the given roots,
/// and the test's own config lines.
final class E2EScenario {
    let upstream: TestUpstream
    let proxy: ProxyUnderTest
    let trustStoreFile: String

    /// `config` is added to the proxy's configuration as is (e.g. `"hosts": {…},`).
    init(directory: String, serving served: [X509Certificate], key: TestKey, trusting roots: [X509Certificate],
         config: String = "", upstreamArguments: [String] = [],
         resolving hosts: [String] = ["api.example.com"]) throws {
        let servedFile = try Self.pemFile(served, in: directory)
        let keyFile = directory + "/key-\(UUID().uuidString).pem"
        try key.pem.write(toFile: keyFile, atomically: true, encoding: .utf8)
        trustStoreFile = try Self.pemFile(roots, in: directory)
        upstream = try TestUpstream(certificateChain: servedFile, key: keyFile, directory: directory,
                                    extraArguments: upstreamArguments)
        let port = upstream.port
        let resolve = hosts.map { "\"\($0):443\": \"127.0.0.1:\(port)\"" }.joined(separator: ", ")
        proxy = try ProxyUnderTest(directory: directory, body: """
            "trust_store": "\(trustStoreFile)",
            "resolve": { \(resolve) },
            "threads": 1,
            \(config)
            """)
    }

    /// `chain`'s leaf and intermediate served, its root (or `roots`) trusted.
    convenience init(directory: String, chain: TestPKI.Chain, trusting roots: [X509Certificate]? = nil,
                     config: String = "", upstreamArguments: [String] = [],
                     resolving hosts: [String] = ["api.example.com"]) throws {
        try self.init(directory: directory, serving: chain.served, key: chain.leaf.key,
                      trusting: roots ?? [chain.root.certificate], config: config, upstreamArguments: upstreamArguments,
                      resolving: hosts)
    }

    /// A forward-proxy GET of `http://<host><path>`.
    func get(_ path: String = "/bytes/100", host: String = "api.example.com", extra: [String] = []) throws -> Curl.Result {
        try Curl.run(["-x", proxy.forwardProxy] + extra + ["http://\(host)\(path)"], timeout: 15)
    }

    /// Writes `certificates` as one PEM file with a fresh name and returns its path.
    static func pemFile(_ certificates: [X509Certificate], in directory: String) throws -> String {
        let file = directory + "/certs-\(UUID().uuidString).pem"
        try certificates.map(TestPKI.pem).joined().write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// A well-formed pin that matches nothing: the backup pin SPEC §2.1 asks for.
    static func backupPin() -> String {
        "sha256/" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    }

    /// The `sha256/…` pin of a certificate's key.
    static func pin(_ certificate: X509Certificate) -> String {
        SPKIPinText.of(certificate)
    }
}
