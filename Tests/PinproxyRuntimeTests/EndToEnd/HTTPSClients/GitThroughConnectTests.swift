import Foundation
import Testing

/// `git clone` over HTTPS (git's libcurl transport) with `http.proxy` naming
/// the forward listener and `GIT_SSL_CAINFO` the only trusted roots, from a
/// smart-HTTP origin (`git http-backend`): a ref advertisement, then
/// `git-upload-pack` POSTs, all inside the intercepted tunnel.
struct GitHTTPSClient: HTTPSClient {
    let origin = ConnectWorld.OriginKind.git

    func fetch(_ url: String, proxyPort: UInt16, trusting roots: String, in directory: TemporaryDirectory) throws -> ClientOutcome {
        guard let git = GitOrigin.executable else { throw TestFailure("git is not installed") }
        let name = "git-\(UUID().uuidString)"
        let home = directory.file(name + "-home"), clone = directory.file(name + "-clone"), trace = directory.file(name + ".trace")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        var environment = GitOrigin.environment(home: home).merging(ClientRuntime.proxyEnvironment(port: proxyPort)) { $1 }
        environment["GIT_SSL_CAINFO"] = roots
        // Headers only (never bodies): the statuses git's libcurl saw.
        environment["GIT_TRACE_CURL"] = trace
        environment["GIT_TRACE_CURL_NO_DATA"] = "1"
        let result = try ChildProcess.run(git, ["-c", "http.proxy=http://127.0.0.1:\(proxyPort)", "clone", "-q", url, clone],
                                          options: .init(environment: environment), timeout: 300)
        return ClientOutcome(exitStatus: result.status, status: result.status == 0 ? Self.lastStatus(in: contents(of: trace)) : nil,
                             error: result.errorOutput, bodyFile: clone + "/" + GitOrigin.payloadFile)
    }

    /// The status of the last response head in a GIT_TRACE_CURL log
    /// (`<= Recv header: HTTP/1.1 200 OK`).
    static func lastStatus(in trace: String) -> Int? {
        trace.split(separator: "\n").reversed().lazy.compactMap { line -> Int? in
            guard let range = line.range(of: "<= Recv header: HTTP/") else { return nil }
            return line[range.upperBound...].split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }.first
    }

    /// git reports libcurl's words: "fatal: unable to access '…': CONNECT tunnel failed, response 502".
    func reportsRefusedConnect(_ outcome: ClientOutcome, status: Int) -> Bool {
        outcome.error.contains("fatal: unable to access") && outcome.error.contains("CONNECT tunnel failed, response \(status)")
    }
}

extension HTTPSClientsEndToEndTests {
    @Suite("git clone with http.proxy and GIT_SSL_CAINFO",
           .enabled(if: GitOrigin.executable != nil, "git is not installed (Debian git; `make test` installs it)"))
    struct GitThroughConnect {
        let client = GitHTTPSClient()

        /// The clone went through smart HTTP: a ref advertisement, then at least one upload-pack POST, all answered 200.
        static func expectSmartHTTP(_ run: ConnectRun, repository: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let requests = run.world.gitOrigin?.requests() ?? []
            #expect(requests.first.map { "\($0.method) \($0.path)" } == "GET /\(repository).git/info/refs",
                    sourceLocation: sourceLocation)
            #expect(requests.contains { $0.method == "POST" && $0.path == "/\(repository).git/git-upload-pack" },
                    sourceLocation: sourceLocation)
            #expect(requests.allSatisfy { $0.status == 200 }, "\(requests.map { "\($0.method) \($0.path) \($0.status)" })",
                    sourceLocation: sourceLocation)
        }

        @Test("git clones from a pinned host through interception, trusting only pinproxy's CA: the payload intact")
        func pinnedHost() throws {
            let run = try ConnectCases.pinnedHostIsInterceptedIntact(client)
            Self.expectSmartHTTP(run, repository: GitOrigin.repository(for: .small))
        }

        @Test("git clone from a MITM fails at CONNECT with 502; the impostor gets no byte; one connect violation")
        func impostor() throws { try ConnectCases.impostorIsRefusedAtConnect(client) }

        @Test("git clones a 64 MiB payload through a blind tunnel to an unlisted host, validated against the origin's root")
        func unlistedHost() throws {
            let run = try ConnectCases.unlistedHostIsTunnelledByteExact(client)
            Self.expectSmartHTTP(run, repository: GitOrigin.repository(for: .large))
        }

        @Test("git clone from an unlisted host under default_policy deny fails at CONNECT with 403")
        func deniedHost() throws { try ConnectCases.deniedHostGetsForbidden(client) }
    }
}
