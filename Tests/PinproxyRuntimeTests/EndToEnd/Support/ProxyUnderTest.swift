import Foundation
import PinproxyCore
@testable import PinproxyRuntime

/// pinproxy itself, in this process: the real `ConfigurationLoader`, the real
/// `Daemon` with its event loops and sockets, a recording sink next to the
/// real violation log file.
final class ProxyUnderTest: @unchecked Sendable {
    let daemon: Daemon
    let sink = RecordingViolationSink()
    let forwardPort: UInt16
    let gatewayPort: UInt16
    let logPath: String
    private let finished = DispatchSemaphore(value: 0)

    /// `body` is the JSON5 configuration without `listeners` and `violation_log`,
    /// which are added: a forward listener, and a gateway to `gatewayUpstream`.
    init(directory: String, body: String, gatewayUpstream: String = "api.example.com:443",
         environment: [String: String] = [:]) throws {
        forwardPort = ToolPaths.freePort()
        gatewayPort = ToolPaths.freePort()
        logPath = directory + "/violations-\(UUID().uuidString).jsonl"
        let text = """
        {
          "listeners": [
            { "listen": "127.0.0.1:\(forwardPort)", "mode": "forward" },
            { "listen": "127.0.0.1:\(gatewayPort)", "mode": "gateway", "upstream": "\(gatewayUpstream)" },
          ],
          "violation_log": "\(logPath)",
          \(body)
        }
        """
        let (configuration, _) = try ConfigurationLoader.parse(text: text, source: "<test>", environment: environment, cpuCount: 2)
        let quiet = Logger(environment: [:], descriptor: open("/dev/null", O_WRONLY))
        daemon = try Daemon(configuration: configuration,
                            options: Daemon.Options(configPath: nil, environment: environment, handlesSignals: false),
                            logger: quiet, sink: sink)
        let daemon = self.daemon
        let finished = self.finished
        Thread {
            _ = daemon.run()
            finished.signal()
        }.start()
        daemon.waitUntilReady()
    }

    deinit {
        daemon.requestShutdown()
        finished.wait()
    }

    var forwardProxy: String { "http://127.0.0.1:\(forwardPort)" }
    var gatewayBase: String { "http://127.0.0.1:\(gatewayPort)" }

    /// The violation log's lines, parsed.
    func logLines() -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }
}
