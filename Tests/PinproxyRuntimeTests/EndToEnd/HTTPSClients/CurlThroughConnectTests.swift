import Foundation
import Testing
@testable import PinproxyRuntime

/// curl (libcurl with OpenSSL) with `https_proxy` and `--cacert`: the client
/// behind most shell scripts, and the one whose view of the `CONNECT`
/// answer is complete (`%{http_connect}` and the head in `-D`).
struct CurlHTTPSClient: HTTPSClient {
    static let path = "/usr/bin/curl"
    let origin = ConnectWorld.OriginKind.bytes

    func fetch(_ url: String, proxyPort: UInt16, trusting roots: String, in directory: TemporaryDirectory) throws -> ClientOutcome {
        let name = "curl-\(UUID().uuidString)"
        let heads = directory.file(name + ".heads"), body = directory.file(name + ".body")
        let result = try ChildProcess.run(Self.path, ["-s", "-S", "--max-time", "120", "--cacert", roots, "-D", heads,
                                                      "-o", body, "-w", "%{http_connect} %{http_code}", url],
                                          options: .init(environment: ClientRuntime.proxyEnvironment(port: proxyPort)),
                                          timeout: 130)
        let codes = result.output.split(separator: " ").compactMap { Int($0) }
        let response = codes.count == 2 && codes[1] != 0 ? codes[1] : nil
        // The head of the CONNECT answer comes first in -D, before the origin's own.
        let connectHead = contents(of: heads).components(separatedBy: "\r\n\r\n").first ?? ""
        return ClientOutcome(exitStatus: result.status, status: response,
                             error: "exit \(result.status), CONNECT answered \(codes.first ?? 0): "
                                 + ClientRuntime.firstLine(result.errorOutput) + "\n" + connectHead,
                             bodyFile: body)
    }

    /// curl 7.88: exit 56 with "CONNECT tunnel failed, response N".
    func reportsRefusedConnect(_ outcome: ClientOutcome, status: Int) -> Bool {
        outcome.exitStatus == 56 && outcome.error.contains("CONNECT answered \(status):")
            && outcome.error.contains("CONNECT tunnel failed, response \(status)")
    }
}

extension HTTPSClientsEndToEndTests {
    @Suite("curl with https_proxy and --cacert", .enabled(if: FileManager.default.isExecutableFile(atPath: CurlHTTPSClient.path),
                                                         "curl is not installed (Debian curl; `make test` installs it)"))
    struct CurlThroughConnect {
        let client = CurlHTTPSClient()

        @Test("curl fetches a pinned host through interception, trusting only pinproxy's CA: 200, body intact")
        func pinnedHost() throws {
            try ConnectCases.pinnedHostIsInterceptedIntact(client)
        }

        @Test("curl meets a MITM as a 502 to its CONNECT with the pin_mismatch Proxy-Status; the impostor gets no byte")
        func impostor() throws {
            let run = try ConnectCases.impostorIsRefusedAtConnect(client)
            #expect(run.outcome.error.contains("Proxy-Status: " + E2EVerdict.proxyStatus("tls_certificate_error", details: "pin_mismatch")),
                    "\(run.outcome.error)")
        }

        @Test("curl through a blind tunnel to an unlisted host: 64 MiB byte-exact, validated against the origin's root")
        func unlistedHost() throws {
            try ConnectCases.unlistedHostIsTunnelledByteExact(client)
        }

        @Test("curl's CONNECT to an unlisted host under default_policy deny is answered 403 http_request_denied")
        func deniedHost() throws {
            let run = try ConnectCases.deniedHostGetsForbidden(client)
            #expect(run.outcome.error.contains("Proxy-Status: " + E2EVerdict.proxyStatus("http_request_denied")),
                    "\(run.outcome.error)")
        }
    }
}
