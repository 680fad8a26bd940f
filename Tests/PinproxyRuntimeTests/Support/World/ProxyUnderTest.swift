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

    /// Loads `configuration` with a forward listener on `forwardPort` and a
    /// gateway to `gatewayUpstream` on `gatewayPort`, as the daemon would read
    /// its file, and starts serving; returns once every listener accepts.
    /// `environment` is what the daemon reads instead of this process's
    /// (`PINPROXY_RESOLV_CONF`). `logger` gets the daemon's log lines
    /// (`CapturedLog`, for a test that asserts what was logged); without one
    /// they go to /dev/null.
    init(configuration: ProxyConfiguration, forwardPort: UInt16, gatewayPort: UInt16, gatewayUpstream: String,
         environment: [String: String] = [:], logger: Logger? = nil) throws {
        self.forwardPort = forwardPort
        self.gatewayPort = gatewayPort
        logPath = configuration.violationLog
        let text = configuration.text(listeners: [.forward(port: forwardPort),
                                                  .gateway(port: gatewayPort, upstream: gatewayUpstream)])
        let (configuration, _) = try ConfigurationLoader.parse(text: text, source: "<test>", environment: environment, cpuCount: 2)
        let logger = logger ?? Logger(environment: [:], descriptor: open("/dev/null", O_WRONLY))
        daemon = try Daemon(configuration: configuration,
                            options: Daemon.Options(configPath: nil, environment: environment, handlesSignals: false),
                            logger: logger, sink: sink)
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
        contents(of: logPath).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }
}
