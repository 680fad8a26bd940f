import Foundation
import Testing

/// Java's `java.net.http.HttpClient` (Tests/Tools/java-https-client, a
/// single-file source program run with `java File.java`): the proxy through
/// `ProxySelector.of(…)`, as an HttpClient ignores `https_proxy`, and trust
/// from a PKCS12 truststore that `keytool -importcert` makes of the roots at
/// test time. It offers ALPN `h2` first, as the Go client does.
struct JavaHTTPSClient: HTTPSClient {
    static let java = ClientRuntime.find("java")
    static let keytool = ClientRuntime.find("keytool")
    static let storePassword = "pinproxy-tests"
    let origin = ConnectWorld.OriginKind.bytes

    /// A PKCS12 truststore holding the one certificate of `roots`.
    static func truststore(of roots: String, in directory: TemporaryDirectory) throws -> String {
        guard let keytool else { throw TestFailure("keytool is not installed") }
        let store = directory.file("truststore-\(UUID().uuidString).p12")
        let result = try ChildProcess.run(keytool, ["-importcert", "-noprompt", "-alias", "root", "-file", roots,
                                                    "-storetype", "PKCS12", "-keystore", store, "-storepass", storePassword],
                                          timeout: 60)
        guard result.status == 0 else { throw TestFailure("keytool -importcert: \(result.output)\(result.errorOutput)") }
        return store
    }

    func fetch(_ url: String, proxyPort: UInt16, trusting roots: String, in directory: TemporaryDirectory) throws -> ClientOutcome {
        guard let java = Self.java else { throw TestFailure("java is not installed") }
        let store = try Self.truststore(of: roots, in: directory)
        let body = directory.file("java-\(UUID().uuidString).body")
        let result = try ChildProcess.run(java, [ToolPaths.tool("java-https-client/HTTPSClient.java"), String(proxyPort),
                                                 store, Self.storePassword, body, url], timeout: 120)
        return ClientOutcome(helper: result, bodyFile: body)
    }

    /// JDK 17's HttpClient fails a refused tunnel with an IOException of its own words.
    func reportsRefusedConnect(_ outcome: ClientOutcome, status: Int) -> Bool {
        outcome.error.contains("java.io.IOException: Tunnel failed, got: \(status)")
    }
}

extension HTTPSClientsEndToEndTests {
    @Suite("Java HttpClient with ProxySelector and a PKCS12 truststore",
           .enabled(if: JavaHTTPSClient.java != nil && JavaHTTPSClient.keytool != nil,
                    "java or keytool is not installed (Debian default-jre-headless; `make test` installs it)"))
    struct JavaThroughConnect {
        let client = JavaHTTPSClient()

        @Test("Java fetches a pinned host through interception, trusting only pinproxy's CA: 200, body intact")
        func pinnedHost() throws { try ConnectCases.pinnedHostIsInterceptedIntact(client) }

        @Test("Java meets a MITM as a failed tunnel (502); the impostor gets no byte; one connect violation")
        func impostor() throws { try ConnectCases.impostorIsRefusedAtConnect(client) }

        @Test("Java through a blind tunnel to an unlisted host: 64 MiB byte-exact, validated against the origin's root")
        func unlistedHost() throws { try ConnectCases.unlistedHostIsTunnelledByteExact(client) }

        @Test("Java's CONNECT to an unlisted host under default_policy deny fails with 403")
        func deniedHost() throws { try ConnectCases.deniedHostGetsForbidden(client) }
    }
}
