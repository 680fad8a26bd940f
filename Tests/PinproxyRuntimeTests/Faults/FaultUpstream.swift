import Foundation

/// A hostile TLS upstream on loopback (Tests/Tools/fault_upstream.py), one
/// misbehaviour per instance, started per test and killed when released.
final class FaultUpstream {
    /// The misbehaviours fault_upstream.py knows, by its `--mode` names.
    enum Mode: String {
        case resetHandshake = "reset-handshake"
        case stallResponse = "stall-response"
        case endlessHead = "endless-head"
        case garbageRecords = "garbage-records"
        /// A head and 5 body bytes of 100 over TLS, then bytes that are no TLS record.
        case garbageMidBody = "garbage-mid-body"
        case earlyAnswer = "early-answer"
        case contentLengthAndTransferEncoding = "cl-and-te"
        /// A chunked body whose framing breaks where the request path says.
        case invalidChunkFraming = "bad-chunk"
        /// No TLS: an HTTP server on the port the request goes to.
        case plainHTTP = "plain-http"
    }

    /// One line of the server's per-connection log.
    struct ConnectionRecord: Decodable {
        var mode: String
        var handshake_ok: Bool
        var head_bytes: Int
        var drained: Int
        var error: String?
    }

    private let peer: PythonPeer
    private let log: JSONLinesLog<ConnectionRecord>
    var port: UInt16 { peer.port }

    init(mode: Mode, certificateChain: String, key: String, directory: String) throws {
        let prefix = PythonPeer.filePrefix("fault", in: directory)
        log = JSONLinesLog(path: prefix + ".events")
        peer = try PythonPeer(script: "fault_upstream.py",
                              arguments: ["--mode", mode.rawValue, "--cert", certificateChain, "--key", key, "--events", log.path],
                              filePrefix: prefix)
    }

    /// Waits until at least `count` connections have ended, then returns them.
    func waitForConnections(_ count: Int, timeout: TimeInterval = 5) -> [ConnectionRecord] {
        log.waitForRecords(count, timeout: timeout)
    }
}
