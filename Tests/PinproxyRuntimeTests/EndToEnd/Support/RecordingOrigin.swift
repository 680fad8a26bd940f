import Foundation

/// A TLS origin that records every byte and every request it parsed
/// (Tests/Tools/recording_origin.py), parsing leniently the way many real
/// origins do, so that anything ambiguous pinproxy forwards shows up.
final class RecordingOrigin: @unchecked Sendable {
    /// One line of the origin's event log.
    struct Event: Decodable, Sendable {
        var event: String
        var conn: Int
        var seq: Int?
        var method: String?
        var target: String?
        var body_length: Int?
        var fields: [String]?
        var reason: String?
    }

    private let peer: PythonPeer
    private let log: JSONLinesLog<Event>
    private let rawDirectory: String
    var port: UInt16 { peer.port }

    init(certificateChain: String, key: String, directory: String) throws {
        let prefix = PythonPeer.filePrefix("origin", in: directory)
        log = JSONLinesLog(path: prefix + ".events")
        rawDirectory = prefix + "-raw"
        try FileManager.default.createDirectory(atPath: rawDirectory, withIntermediateDirectories: true)
        peer = try PythonPeer(script: "recording_origin.py",
                              arguments: ["--cert", certificateChain, "--key", key, "--events", log.path,
                                          "--raw-dir", rawDirectory],
                              filePrefix: prefix)
    }

    /// Kills the origin now (it also exits by itself when its parent is gone).
    func stop() { peer.stop() }

    /// Every event logged so far, in order.
    func events() -> [Event] { log.records() }

    /// The parsed requests whose target contains `marker`.
    func requests(containing marker: String) -> [Event] {
        events().filter { $0.event == "request" && ($0.target ?? "").contains(marker) }
    }

    /// Every byte the origin received on connection `conn`.
    func rawBytes(of conn: Int) -> [UInt8] {
        (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: rawDirectory + "/conn-\(conn).bin")))) ?? []
    }
}
