import Foundation
import Testing
@testable import PinproxyRuntime

/// `report_uri`: RFC 7469 §3 reports POSTed to a collector on loopback, one
/// per distinct violation and minute however often a client retries.
@Suite("Pin failure reports end to end")
struct PinFailureReportEndToEndTests {
    /// `Tests/Tools/collector.py`, killed when released.
    final class Collector {
        private let peer: PythonPeer
        let bodiesFile: String
        var port: UInt16 { peer.port }

        init(directory: String) throws {
            let prefix = PythonPeer.filePrefix("collector", in: directory)
            bodiesFile = prefix + ".reports"
            peer = try PythonPeer(script: "collector.py", arguments: ["--out", bodiesFile], filePrefix: prefix)
        }

        /// Lines "PATH CONTENT-TYPE BODY".
        func received() -> [String] {
            contents(of: bodiesFile).split(separator: "\n").map(String.init)
        }
    }

    @Test("a blocked MITM is reported once in RFC 7469 format, however often the client retries")
    func reportedOnceInRFC7469Format() throws {
        let directory = try TemporaryDirectory()
        let collector = try Collector(directory: directory.path)
        let real = try TestPKI.chain(rootName: "Real Root CA")
        let attacker = try TestPKI.chain(rootName: "Attacker Root CA")
        let pins = [E2EScenario.pin(real.intermediate.certificate), E2EScenario.backupPin()]
        let scenario = try E2EScenario(
            chain: attacker,
            trusting: [real.root.certificate, attacker.root.certificate],
            config: """
            "hosts": { "api.example.com": { "policy": "pin-public-keys",
              "pins": [\(pins.map { "\"\($0)\"" }.joined(separator: ", "))],
              "report_uri": "http://127.0.0.1:\(collector.port)/hpkp-report" } },
            """)
        for _ in 0..<3 {
            let result = try scenario.get("/bytes/100?secret=1")
            #expect(result.status == 502)
        }
        _ = eventually(timeout: 5) { !collector.received().isEmpty }
        // Deliberate: a quiet time in which a second report, if one were
        // (wrongly) sent, would arrive.
        usleep(300_000)
        let received = collector.received()
        try #require(received.count == 1, "reports received: \(received.count)")
        let parts = received[0].split(separator: " ", maxSplits: 2).map(String.init)
        #expect(parts[0] == "/hpkp-report")
        #expect(parts[1] == "application/json")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(parts[2].utf8)) as? [String: Any])
        #expect(report["hostname"] as? String == "api.example.com")
        #expect(report["port"] as? Int == 443)
        #expect(report["noted-hostname"] as? String == "api.example.com")
        #expect(report["include-subdomains"] as? Bool == false)
        #expect(report["known-pins"] as? [String] == pins.map { "pin-sha256=\"\($0.dropFirst("sha256/".count))\"" })
        let served = try #require(report["served-certificate-chain"] as? [String])
        #expect(served == [TestPKI.pem(attacker.leaf.certificate), TestPKI.pem(attacker.intermediate.certificate)])
        // The attacker's chain validated (its CA is trusted): the pin decided.
        #expect((report["validated-certificate-chain"] as? [String])?.count == 3)
        #expect(report["date-time"] is String)
        #expect(!parts[2].contains("secret"))
    }
}
