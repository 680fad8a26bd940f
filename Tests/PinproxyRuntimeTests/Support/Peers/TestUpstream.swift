import Foundation

/// A real TLS server on loopback (Tests/Tools/upstream.py, OpenSSL through
/// Python's ssl module), started per test and killed when released.
final class TestUpstream {
    /// One line of the server's per-connection log.
    struct ConnectionRecord: Decodable {
        var handshake_ok: Bool
        var app_bytes: Int
        var requests: Int
    }

    private let peer: PythonPeer
    private let log: JSONLinesLog<ConnectionRecord>
    var port: UInt16 { peer.port }

    /// `extraArguments` go to upstream.py (`--stall-handshake`, `--ciphers …`).
    /// `capAtTLS12` limits the server to TLS 1.2 at most: the script only sets
    /// a minimum version, so the maximum comes from an OpenSSL configuration
    /// file (`MaxProtocol = TLSv1.2` in `system_default`) handed to that one
    /// process through `OPENSSL_CONF`, and an in-process proxy's OpenSSL is
    /// unaffected.
    init(certificateChain: String, key: String, directory: String, extraArguments: [String] = [],
         capAtTLS12: Bool = false) throws {
        let prefix = PythonPeer.filePrefix("upstream", in: directory)
        log = JSONLinesLog(path: prefix + ".events")
        var environment: [String: String] = [:]
        if capAtTLS12 {
            try """
            openssl_conf = default_conf
            [default_conf]
            ssl_conf = ssl_section
            [ssl_section]
            system_default = system_default_section
            [system_default_section]
            MaxProtocol = TLSv1.2

            """.write(toFile: prefix + ".cnf", atomically: true, encoding: .utf8)
            environment["OPENSSL_CONF"] = prefix + ".cnf"
        }
        peer = try PythonPeer(script: "upstream.py",
                              arguments: ["--cert", certificateChain, "--key", key, "--port", "0", "--events", log.path]
                                  + extraArguments,
                              environment: environment, filePrefix: prefix)
    }

    /// Every connection the server has finished with.
    func connections() -> [ConnectionRecord] { log.records() }

    /// Waits until at least `count` connections have been logged (they are
    /// logged when they close), then returns them.
    func waitForConnections(_ count: Int, timeout: TimeInterval = 5) -> [ConnectionRecord] {
        log.waitForRecords(count, timeout: timeout)
    }

    /// The server's counters (`GET /stats`), fetched directly, not through the proxy.
    func stats(caFile: String) throws -> [String: Int] {
        let result = try Curl.run(["--cacert", caFile, "--resolve", "api.example.com:\(port):127.0.0.1",
                                   "https://api.example.com:\(port)/stats"])
        return (try JSONSerialization.jsonObject(with: result.body) as? [String: Int]) ?? [:]
    }

    /// upstream.py's body bytes for `/bytes/N` and `/chunked/N`: byte i is i % 251.
    static func pattern(_ count: Int) -> Data {
        Data((0..<count).map { UInt8($0 % 251) })
    }
}
