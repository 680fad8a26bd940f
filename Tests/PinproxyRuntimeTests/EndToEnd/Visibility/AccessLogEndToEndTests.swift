import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// SPEC §6 `access_log`: one JSON line per exchange and per CONNECT, with
/// what happened to it, and never the target, query string, headers or bodies.
@Suite("access_log: one line per exchange or CONNECT")
struct AccessLogEndToEndTests {
    let proxy: ProxyUnderTest
    let logFile: String
    let caRoot: String
    let world: TestWorld

    init() throws {
        world = try TestWorld()
        let attacker = try TestPKI.chain(names: ["DNS:mitm.example.com"], rootName: "Attacker Root CA")
        try world.startUpstream(resolving: ["api.example.com:443", "tunnel.example.com:443"])
        try world.startUpstream(serving: attacker.served, key: attacker.leaf.key, resolving: ["mitm.example.com:443"])
        world.configuration.trustStore = try world.directory.pemFile([world.pki.chain.root.certificate, attacker.root.certificate])
        logFile = world.directory.file("access.jsonl")
        let caDirectory = world.directory.file("ca")
        _ = try InterceptionAuthority.create(in: caDirectory, for: InterceptionScope(names: ["api.example.com", "mitm.example.com"]))
        caRoot = caDirectory + "/root.pem"
        let pin = E2EScenario.pin(world.pki.chain.intermediate.certificate)
        world.configuration.threads = 1
        world.configuration.extra = """
        "access_log": "\(logFile)",
        "interception": { "ca_dir": "\(caDirectory)" },
        "hosts": {
          "api.example.com": { "policy": "pin-public-keys", "pins": ["\(pin)", "\(E2EScenario.backupPin())"] },
          "mitm.example.com": { "policy": "pin-public-keys", "pins": ["\(pin)", "\(E2EScenario.backupPin())"] },
          "tunnel.example.com": { "policy": "disable" }
        },
        """
        proxy = try world.startProxy()
    }

    private func lines(count: Int) -> [[String: Any]] {
        let read = {
            ((try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
        return eventually(read, until: { $0.count >= count })
    }

    @Test("plain, pooled, uploaded, blocked, intercepted and tunnelled traffic each leave their line")
    func mixedTraffic() throws {
        let base = ["-x", proxy.forwardProxy]
        // Two requests on one client connection: the second reuses the pooled upstream.
        let twice = try Curl.run(base + ["http://api.example.com/bytes/100", "http://api.example.com/bytes/200"])
        #expect(twice.exitCode == 0)
        let upload = world.directory.file("upload.bin")
        try Data(repeating: 7, count: 1000).write(to: URL(fileURLWithPath: upload))
        #expect(try Curl.run(base + ["--data-binary", "@\(upload)", "http://api.example.com/echo-length"]).status == 200)
        #expect(try Curl.run(base + ["http://mitm.example.com/bytes/10"]).status == 502)
        #expect(try Curl.run(base + ["--cacert", caRoot, "https://api.example.com/bytes/300"]).status == 200)
        let root = try world.directory.pemFile([world.pki.chain.root.certificate])
        #expect(try Curl.run(base + ["--cacert", root, "https://tunnel.example.com/bytes/400"]).status == 200)

        let all = lines(count: 7)
        #expect(all.count == 7, "\(all)")
        let keys = ["time", "client_address", "listener", "client_transport", "method", "host", "port", "rule", "status",
                    "bytes_up", "bytes_down", "duration_ms", "upstream"]
        for line in all { #expect(Set(line.keys) == Set(keys)) }
        func summary(_ line: [String: Any]) -> String {
            ["client_transport", "method", "host", "status", "bytes_up", "bytes_down", "upstream"]
                .map { "\(line[$0] ?? "-")" }.joined(separator: " ")
        }
        let summaries = all.map(summary)
        #expect(summaries[0] == "http GET api.example.com 200 0 100 new")
        #expect(summaries[1] == "http GET api.example.com 200 0 200 reused")
        #expect(summaries[2].hasPrefix("http POST api.example.com 200 1000 "))
        #expect(summaries[3] == "http GET mitm.example.com 502 0 0 none")
        #expect(summaries[4].hasPrefix("connect CONNECT api.example.com 200 0 0 "))
        #expect(summaries[5].hasPrefix("intercepted GET api.example.com 200 0 300 "))
        // A blind tunnel counts every byte each way (the TLS records, so more than the 400 of the body).
        let tunnel = all[6]
        #expect("\(tunnel["client_transport"]!) \(tunnel["method"]!) \(tunnel["host"]!) \(tunnel["status"]!) \(tunnel["upstream"]!)"
                == "connect CONNECT tunnel.example.com 200 tunnel")
        #expect((tunnel["bytes_down"] as? Int ?? 0) > 400)
        #expect((tunnel["bytes_up"] as? Int ?? 0) > 0)
        let text = try String(contentsOfFile: logFile, encoding: .utf8)
        #expect(!text.contains("/bytes") && !text.contains("/echo"), "never the target (nor so its query)")
    }
}
