import Foundation
import Testing

/// Debian's Python 3 (`/usr/bin/python3`, where python3-requests installs)
/// running Tests/Tools/https_client.py: urllib from the standard library, or
/// requests, each taking the proxy from `https_proxy` as any Python program
/// does and trusting only the given roots.
struct PythonHTTPSClient: HTTPSClient {
    enum Library: String { case urllib, requests }

    static let interpreter = "/usr/bin/python3"
    let library: Library
    let origin = ConnectWorld.OriginKind.bytes

    static var hasInterpreter: Bool { FileManager.default.isExecutableFile(atPath: interpreter) }

    /// Whether Debian's python3 can import requests (python3-requests).
    static let hasRequests: Bool = hasInterpreter
        && ((try? ChildProcess.run(interpreter, ["-c", "import requests"], timeout: 30).status) == 0)

    func fetch(_ url: String, proxyPort: UInt16, trusting roots: String, in directory: TemporaryDirectory) throws -> ClientOutcome {
        let body = directory.file("python-\(library.rawValue)-\(UUID().uuidString).body")
        let result = try ChildProcess.run(Self.interpreter, [ToolPaths.tool("https_client.py"), "--library", library.rawValue,
                                                             "--ca", roots, "--output", body, url],
                                          options: .init(environment: ClientRuntime.proxyEnvironment(port: proxyPort)),
                                          timeout: 120)
        return ClientOutcome(helper: result, bodyFile: body)
    }

    /// http.client's tunnel (under urllib and urllib3 alike) raises
    /// `OSError("Tunnel connection failed: 502 Bad Gateway")`; requests wraps
    /// it in a `ProxyError`.
    func reportsRefusedConnect(_ outcome: ClientOutcome, status: Int) -> Bool {
        outcome.error.contains("Tunnel connection failed: \(status) ")
            && (library == .urllib ? outcome.error.hasPrefix("URLError") : outcome.error.hasPrefix("ProxyError"))
    }
}

extension HTTPSClientsEndToEndTests {
    @Suite("Python urllib with https_proxy", .enabled(if: PythonHTTPSClient.hasInterpreter,
                                                       "/usr/bin/python3 is not installed (Debian python3; `make test` installs it)"))
    struct PythonURLLibThroughConnect {
        let client = PythonHTTPSClient(library: .urllib)

        @Test("urllib fetches a pinned host through interception, trusting only pinproxy's CA: 200, body intact")
        func pinnedHost() throws { try ConnectCases.pinnedHostIsInterceptedIntact(client) }

        @Test("urllib meets a MITM as 'Tunnel connection failed: 502'; the impostor gets no byte; one connect violation")
        func impostor() throws { try ConnectCases.impostorIsRefusedAtConnect(client) }

        @Test("urllib through a blind tunnel to an unlisted host: 64 MiB byte-exact, validated against the origin's root")
        func unlistedHost() throws { try ConnectCases.unlistedHostIsTunnelledByteExact(client) }

        @Test("urllib's CONNECT to an unlisted host under default_policy deny fails with 403")
        func deniedHost() throws { try ConnectCases.deniedHostGetsForbidden(client) }
    }

    @Suite("Python requests with https_proxy", .enabled(if: PythonHTTPSClient.hasRequests,
                                                         "/usr/bin/python3 cannot import requests (Debian python3-requests; `make test` installs it)"))
    struct PythonRequestsThroughConnect {
        let client = PythonHTTPSClient(library: .requests)

        @Test("requests fetches a pinned host through interception, trusting only pinproxy's CA: 200, body intact")
        func pinnedHost() throws { try ConnectCases.pinnedHostIsInterceptedIntact(client) }

        @Test("requests meets a MITM as a ProxyError with 'Tunnel connection failed: 502'; the impostor gets no byte")
        func impostor() throws { try ConnectCases.impostorIsRefusedAtConnect(client) }

        @Test("requests through a blind tunnel to an unlisted host: 64 MiB byte-exact, validated against the origin's root")
        func unlistedHost() throws { try ConnectCases.unlistedHostIsTunnelledByteExact(client) }

        @Test("requests' CONNECT to an unlisted host under default_policy deny fails with 403")
        func deniedHost() throws { try ConnectCases.deniedHostGetsForbidden(client) }
    }
}
