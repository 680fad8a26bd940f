import Foundation
import Testing

/// A rejected reload on the real binary (SPEC §5): every problem of the new
/// file is its own stderr line (one journal record each, never one line
/// joined with literal `\n`), and the old generation keeps serving.
@Suite("pinproxy under systemd: a rejected reload", .serialized)
struct ServiceReloadRejectionTests {
    /// SIGHUPs `process` and returns the stderr lines that the reload wrote.
    private func reloadLines(_ service: ServiceUnderTest, _ process: ChildProcess) throws -> [String] {
        let before = process.stderrText.utf8.count
        process.send(SIGHUP)
        #expect(NotifyListener.states(try service.waitForReady()) == ["RELOADING=1", "READY=1"])
        let after = String(decoding: Array(process.stderrText.utf8).dropFirst(before), as: UTF8.self)
        return after.split(separator: "\n").map(String.init)
    }

    /// The lines from the "rejected" summary on, which must say `count` problems.
    private func rejection(in lines: [String], count: Int) throws -> [String] {
        let start = try #require(lines.firstIndex { $0.hasPrefix("reload: rejected, keeping generation 1") }, "stderr:\n\(lines)")
        #expect(lines[start] == "reload: rejected, keeping generation 1: \(count) problem(s)")
        return Array(lines[(start + 1)...])
    }

    @Test("N problems are N stderr lines, and generation 1 serves on")
    func oneLinePerProblem() throws {
        let service = try ServiceUnderTest(body: #""default_policy": "deny", "threads": 1,"#)
        try service.start()
        let process = try service.running()
        let file = service.world.directory.file("pinproxy.json")

        // Three problems the loader finds, each with its own line of the file.
        service.world.configuration.extra = """
            "default_policy": "deny", "default_polcy": "deny",
            "threads": "one",
            "hosts": { "api.example.com": { "policy": "pin-public-keys", "pins": ["sha256/short", "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="] } },
            """
        try service.writeConfiguration()
        let parsed = try rejection(in: try reloadLines(service, process), count: 3)
        #expect(parsed.count == 3, "stderr:\n\(parsed.joined(separator: "\n"))")
        for (line, path) in zip(parsed, ["$.default_polcy", "$.threads", "$.hosts[\"api.example.com\"].pins[0]"]) {
            #expect(line.hasPrefix("reload: \(file):"), "\(line)")
            #expect(line.contains(": \(path): "), "\(line)")
        }

        // Two problems found only when the files are loaded (a generation is built).
        let garbage = try service.world.directory.write("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n",
                                                        to: "garbage.pem")
        service.world.configuration.extra = """
            "default_policy": "deny",
            "hosts": { "a.example.com": { "policy": "anchors", "anchors": ["\(garbage)"] },
                       "b.example.com": { "policy": "pin-certificates", "certificates": ["\(garbage)"] } },
            """
        try service.writeConfiguration()
        let built = try rejection(in: try reloadLines(service, process), count: 2)
        #expect(built.count == 2, "stderr:\n\(built.joined(separator: "\n"))")
        #expect(built.first?.hasPrefix("reload: \(file):") == true, "\(built)")
        #expect(built.first?.contains(#": $.hosts["a.example.com"].anchors[0]: \#(garbage): "#) == true, "\(built)")
        #expect(built.last?.hasPrefix("reload: \(file):") == true, "\(built)")
        #expect(built.last?.contains(#": $.hosts["b.example.com"].certificates[0]: \#(garbage): "#) == true, "\(built)")

        #expect(!process.stderrText.contains("\\n"), "a literal \\n joins problems into one record:\n\(process.stderrText)")
        let denied = try Curl.run(["-x", service.proxy, "http://api.example.com/"])
        #expect(denied.status == 403)
        #expect(denied.header("Proxy-Status") == "pinproxy; error=http_request_denied")
        #expect(!process.stderrText.contains("configuration generation 2 active"))
        process.send(SIGTERM)
        #expect(process.waitForExit(timeout: 20) == 0)
    }
}
