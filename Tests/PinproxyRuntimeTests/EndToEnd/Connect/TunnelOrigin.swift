import Foundation

/// The plain TCP echo origin behind blind tunnels (Tests/Tools/tunnel_origin.py):
/// it keeps every byte it received per connection, and answers the
/// client's end of stream with one last line before it closes.
final class TunnelOrigin {
    struct Event: Decodable {
        var event: String
        var conn: Int
        var received: Int?
    }

    private let peer: PythonPeer
    private let log: JSONLinesLog<Event>
    private let rawDirectory: String
    var port: UInt16 { peer.port }

    init(directory: String) throws {
        let prefix = PythonPeer.filePrefix("tunnel-origin", in: directory)
        log = JSONLinesLog(path: prefix + ".events")
        rawDirectory = prefix + "-raw"
        try FileManager.default.createDirectory(atPath: rawDirectory, withIntermediateDirectories: true)
        peer = try PythonPeer(script: "tunnel_origin.py", arguments: ["--events", log.path, "--raw-dir", rawDirectory],
                              filePrefix: prefix)
    }

    func events() -> [Event] { log.records() }

    /// Waits until connection `conn` has logged `kind` (`eof`, `reset`); nil when it has not within `timeout`.
    func waitForEvent(_ kind: String, conn: Int, timeout: TimeInterval = 5) -> Event? {
        eventually(timeout: timeout, { self.events().first { $0.event == kind && $0.conn == conn } }, until: { $0 != nil })
    }

    /// Every byte connection `conn` received so far.
    func rawBytes(of conn: Int) -> [UInt8] {
        (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: rawDirectory + "/conn-\(conn).bin")))) ?? []
    }

    /// The line the origin sends after the client's end of stream.
    static func endOfStreamLine(received: Int) -> [UInt8] {
        Array("origin saw end of stream after \(received) bytes\n".utf8)
    }
}
