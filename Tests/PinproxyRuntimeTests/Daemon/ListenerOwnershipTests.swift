import Foundation
import Testing
@testable import PinproxyRuntime

/// SPEC §5: a listen address belongs to one pinproxy process. A second
/// instance on the same address (a forgotten test instance with weaker pins)
/// must fail to start, not take a share of the clients; one process still
/// accepts on every loop, and a reload adds, keeps and drops addresses.
@Suite("Listener ownership")
struct ListenerOwnershipTests {
    /// A config with a forward listener on `port` and `threads` loops.
    static func config(port: UInt16, directory: String, name: String, threads: Int = 2) throws -> String {
        let path = directory + "/\(name).json"
        try """
        { "listeners": [ { "listen": "127.0.0.1:\(port)", "mode": "forward" } ],
          "violation_log": "\(directory)/\(name)-violations.jsonl", "threads": \(threads) }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("a second `pinproxy run` on the same address exits 3 naming the address; the first keeps serving")
    func secondInstanceRefused() throws {
        let directory = try TemporaryDirectory()
        let port = ToolPaths.freePort()
        let first = try PinproxyBinary.start(["run", "--config", try Self.config(port: port, directory: directory.path, name: "first")])
        #expect(eventually { (try? RawClient(port: port)) != nil }, "the first instance never listened")
        let second = try PinproxyBinary.run(["run", "--config", try Self.config(port: port, directory: directory.path, name: "second")],
                                            timeout: 15)
        #expect(second.status == 3)
        #expect(second.errorOutput.contains("127.0.0.1:\(port)") && second.errorOutput.contains("Address already in use"),
                "\(second.errorOutput)")
        #expect(first.isRunning)
        // The first still owns the address: it answers (a request addressed to itself is 508).
        let client = try RawClient(port: port)
        client.send("GET http://127.0.0.1:\(port)/ HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        var pending: [UInt8] = []
        #expect(RawHTTPResponse.read(from: client, pending: &pending)?.status == 508)
        first.send(SIGTERM)
        #expect(first.waitForExit(timeout: 15) == 0)
    }

    @Test("a reload keeps an address across a change of mode, binds a new one and closes a dropped one")
    func reloadChangesListeners() throws {
        let directory = try TemporaryDirectory()
        let kept = ToolPaths.freePort()
        let dropped = ToolPaths.freePort()
        let added = ToolPaths.freePort()
        let path = directory.path + "/pinproxy.json"
        func write(_ listeners: String) throws {
            try """
            { "listeners": [ \(listeners) ], "violation_log": "\(directory.path)/violations.jsonl", "threads": 2 }
            """.write(toFile: path, atomically: true, encoding: .utf8)
        }
        try write("""
            { "listen": "127.0.0.1:\(kept)", "mode": "forward" }, { "listen": "127.0.0.1:\(dropped)", "mode": "forward" }
            """)
        let daemon = try PinproxyBinary.start(["run", "--config", path])
        #expect(eventually { (try? RawClient(port: kept)) != nil && (try? RawClient(port: dropped)) != nil })
        try write("""
            { "listen": "127.0.0.1:\(kept)", "mode": "gateway", "upstream": "127.0.0.1:\(kept)" },
            { "listen": "127.0.0.1:\(added)", "mode": "forward" }
            """)
        daemon.send(SIGHUP)
        #expect(eventually { (try? RawClient(port: added)) != nil }, "the added listener never listened")
        #expect(eventually { (try? RawClient(port: dropped)) == nil }, "the dropped listener still accepts")
        #expect(!daemon.stderrText.contains("Address already in use"), "\(daemon.stderrText)")
        // The kept address is a gateway now: an origin-form request is routed to the upstream (itself: 508).
        let client = try RawClient(port: kept)
        client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        var pending: [UInt8] = []
        #expect(RawHTTPResponse.read(from: client, pending: &pending)?.status == 508)
        daemon.send(SIGTERM)
        #expect(daemon.waitForExit(timeout: 15) == 0)
    }
}
