import Foundation
@testable import PinproxyRuntime

/// One end-to-end setup, built on a `TestWorld`: a real TLS server
/// (upstream.py) serving the given certificates, and pinproxy in process with
/// `api.example.com:443` resolved to it (and any other `resolving` names), a
/// trust store of the given roots, one event loop, and the test's own config lines.
struct E2EScenario {
    let upstream: TestUpstream
    let proxy: ProxyUnderTest
    // Declared last, so released last: the world then stops the proxy before
    // it kills the upstream.
    let world: TestWorld

    var trustStoreFile: String { world.configuration.trustStore ?? "" }

    /// `config` is added to the proxy's configuration as is (e.g. `"hosts": {…},`).
    /// `directory` may be shared with other scenarios; without one the world makes its own.
    init(directory: TemporaryDirectory? = nil, serving served: [X509Certificate], key: TestKey, trusting roots: [X509Certificate],
         config: String = "", upstreamArguments: [String] = [],
         resolving hosts: [String] = [TestWorld.apiHost]) throws {
        world = try TestWorld(directory: directory)
        upstream = try world.startUpstream(serving: served, key: key, arguments: upstreamArguments,
                                           resolving: hosts.map { $0 + ":443" })
        world.configuration.trustStore = try world.directory.pemFile(roots)
        world.configuration.threads = 1
        world.configuration.extra = config
        proxy = try world.startProxy()
    }

    /// `chain`'s leaf and intermediate served, its root (or `roots`) trusted.
    init(directory: TemporaryDirectory? = nil, chain: TestPKI.Chain, trusting roots: [X509Certificate]? = nil,
         config: String = "", upstreamArguments: [String] = [],
         resolving hosts: [String] = [TestWorld.apiHost]) throws {
        try self.init(directory: directory, serving: chain.served, key: chain.leaf.key,
                      trusting: roots ?? [chain.root.certificate], config: config, upstreamArguments: upstreamArguments,
                      resolving: hosts)
    }

    /// A forward-proxy GET of `http://<host><path>`.
    func get(_ path: String = "/bytes/100", host: String = TestWorld.apiHost, extra: [String] = [],
             timeout: TimeInterval = 15) throws -> Curl.Result {
        try Curl.run(world.proxyArguments + extra + ["http://\(host)\(path)"], timeout: timeout)
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
