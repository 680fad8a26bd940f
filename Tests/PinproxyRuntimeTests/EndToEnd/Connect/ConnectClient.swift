import Foundation

/// The Swift side of Tests/Tools/connect_client.py: an HTTPS client behind
/// CONNECT whose TLS runs through memory BIOs, so that the test decides how
/// its ClientHello reaches the wire (cut into records and segments, sent
/// before the `200`, stopped halfway, never sent) and which SNI and ALPN it
/// carries. It runs once per call and reports what it saw.
enum ConnectClient {
    /// What the client saw, as the script prints it.
    struct Outcome: Decodable, CustomStringConvertible {
        struct Response: Decodable {
            var status: Int
            var head: String
            var body: String

            /// The body's bytes (the script hands them over as Latin-1 text).
            var bytes: [UInt8] { body.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) } }

            /// The recording origin's JSON answer.
            var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]) ?? [:] }
        }

        /// The status of pinproxy's answer to the CONNECT; nil when it closed without one.
        var connectStatus: Int?
        var connectHead: String?
        /// The ClientHello as written (after re-framing), and in how many TLS records.
        var helloLength: Int?
        var helloRecords: Int?
        /// `ok`, `failed` (an alert or a TLS error), `closed` (end of stream
        /// mid-handshake), `timeout`, `stalled` (the client stopped on purpose),
        /// `not_tried` (no 200).
        var handshake: String
        /// OpenSSL's reason, e.g. `TLSV1_UNRECOGNIZED_NAME: …` for that alert.
        var tlsError: String?
        var alpn: String?
        var version: String?
        /// The subjectAltName values of the certificate pinproxy presented.
        var peerSan: [String]?
        var responses: [Response]
        /// Whether pinproxy closed the connection at the end (`closed`) or kept it (`open`).
        var ending: String
        /// Seconds from the client's last write until pinproxy closed.
        var closedAfter: Double?
        /// Bytes pinproxy sent after the last expected response.
        var unexpected: String?
        /// What broke the script itself (a read that timed out, …), with what it saw before in the other fields.
        var scriptError: String?

        var description: String {
            "CONNECT \(connectStatus.map(String.init) ?? "-"), handshake \(handshake) \(tlsError ?? ""), alpn \(alpn ?? "-"), "
                + "\(responses.count) response(s) \(responses.map(\.status)), ending \(ending) after \(closedAfter ?? -1) s"
                + (scriptError.map { ", script error \($0)" } ?? "")
        }
    }

    /// Runs the client against pinproxy's forward listener on `proxyPort`
    /// with `arguments` (connect_client.py's flags besides these).
    static func run(proxyPort: UInt16, target: String, ca: String?, _ arguments: [String] = [],
                    timeout: TimeInterval = 30) throws -> Outcome {
        var all = ["python3", ToolPaths.tool("connect_client.py"), "--proxy-port", "\(proxyPort)", "--target", target]
        if let ca { all += ["--ca", ca] }
        let result = try ChildProcess.run("/usr/bin/env", all + arguments, timeout: timeout)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        guard let outcome = try? decoder.decode(Outcome.self, from: Data(result.output.utf8)) else {
            throw TestFailure("connect_client.py \(arguments.joined(separator: " ")): \(result.combinedOutput)")
        }
        return outcome
    }
}
