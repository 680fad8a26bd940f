import Foundation
@testable import PinproxyRuntime
import Testing

/// A Go program on the standard library (Tests/Tools/go-https-client):
/// net/http's default transport with `HTTPS_PROXY`, crypto/x509 trusting
/// `SSL_CERT_FILE`, nothing configured in code. It offers ALPN `h2` first,
/// so interception's `http/1.1`-only answer is exercised too.
struct GoHTTPSClient: HTTPSClient {
    static let go = ClientRuntime.find("go")
    let origin = ConnectWorld.OriginKind.bytes

    /// Built once per test run (the first build takes seconds), into a
    /// folder of this process that is removed at exit; the build cache is
    /// shared with the CA tests' Go verifier, offline, on the installed toolchain.
    private static let built = Locked<Result<String, TestFailure>?>(nil)
    static let folder = NSTemporaryDirectory() + "pinproxy-go-https-client-\(getpid())"

    static func binary() throws -> String {
        try built.withLock { cached in
            if let cached { return try cached.get() }
            let result: Result<String, TestFailure>
            do { result = .success(try build()) } catch { result = .failure(error as? TestFailure ?? TestFailure("go build: \(error)")) }
            cached = result
            return try result.get()
        }
    }

    private static func build() throws -> String {
        guard let go else { throw TestFailure("go is not installed") }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: GoHTTPSClient.folder) }
        let environment = ["GOCACHE": NSTemporaryDirectory() + "pinproxy-go-cache", "GOPATH": folder + "/gopath",
                           "GO111MODULE": "off", "GOFLAGS": "", "GOTOOLCHAIN": "local", "GOPROXY": "off"]
        let output = folder + "/go-https-client"
        let result = try ChildProcess.run(go, ["build", "-o", output, ToolPaths.tool("go-https-client/main.go")],
                                          options: .init(environment: environment), timeout: 600)
        guard result.status == 0 else { throw TestFailure("go build failed:\n\(result.errorOutput)") }
        return output
    }

    func fetch(_ url: String, proxyPort: UInt16, trusting roots: String, in directory: TemporaryDirectory) throws -> ClientOutcome {
        let body = directory.file("go-\(UUID().uuidString).body")
        var environment = ClientRuntime.proxyEnvironment(port: proxyPort)
        environment["SSL_CERT_FILE"] = roots
        environment["SSL_CERT_DIR"] = "/nonexistent"   // the system store must not add roots
        let result = try ChildProcess.run(try Self.binary(), ["-output", body, url],
                                          options: .init(environment: environment), timeout: 120)
        return ClientOutcome(helper: result, bodyFile: body)
    }

    /// Go 1.19's transport turns a non-200 CONNECT answer into an error that
    /// is the answer's reason phrase: `Get "https://…": Bad Gateway`.
    func reportsRefusedConnect(_ outcome: ClientOutcome, status: Int) -> Bool {
        let phrase = [502: "Bad Gateway", 403: "Forbidden"][status] ?? "status \(status)"
        return outcome.error.hasPrefix("Get \"https://") && outcome.error.hasSuffix("\": \(phrase)")
    }
}

extension HTTPSClientsEndToEndTests {
    @Suite("Go net/http with HTTPS_PROXY and SSL_CERT_FILE",
           .enabled(if: GoHTTPSClient.go != nil, "go is not installed (Debian golang-go; `make test` installs it)"))
    struct GoThroughConnect {
        let client = GoHTTPSClient()

        @Test("Go fetches a pinned host through interception, trusting only pinproxy's CA: 200, body intact")
        func pinnedHost() throws { try ConnectCases.pinnedHostIsInterceptedIntact(client) }

        @Test("Go meets a MITM as a Bad Gateway answer to its CONNECT; the impostor gets no byte; one connect violation")
        func impostor() throws { try ConnectCases.impostorIsRefusedAtConnect(client) }

        @Test("Go through a blind tunnel to an unlisted host: 64 MiB byte-exact, validated against the origin's root")
        func unlistedHost() throws { try ConnectCases.unlistedHostIsTunnelledByteExact(client) }

        @Test("Go's CONNECT to an unlisted host under default_policy deny is answered Forbidden")
        func deniedHost() throws { try ConnectCases.deniedHostGetsForbidden(client) }
    }
}
