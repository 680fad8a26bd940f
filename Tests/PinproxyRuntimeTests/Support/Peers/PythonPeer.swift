import Foundation

/// A python3 peer from Tests/Tools (upstream.py, fault_upstream.py,
/// recording_origin.py, dns.py, collector.py) on an ephemeral loopback port.
///
/// The handshake every such script keeps: it binds 127.0.0.1 port 0, then
/// writes the port it got to `--ready-file` (to a temporary name first, then
/// renamed, so a first line is never half a port). The peer is SIGKILLed when
/// released: connections a proxy pooled or a fault stalled hold its threads,
/// and the test is over either way.
final class PythonPeer {
    let port: UInt16
    private let process: ChildProcess

    /// A fresh prefix for one peer's files, `<directory>/<tool>-<UUID>`: the
    /// ready file is `<prefix>.port`, and a wrapper names its event log and
    /// the like from the same prefix.
    static func filePrefix(_ tool: String, in directory: String) -> String {
        directory + "/\(tool)-\(UUID().uuidString)"
    }

    /// Starts `python3 Tests/Tools/<script> --ready-file <prefix>.port arguments…`
    /// and waits (bounded) for the port.
    init(script: String, arguments: [String], environment: [String: String] = [:], filePrefix: String) throws {
        let readyFile = filePrefix + ".port"
        process = try ChildProcess("/usr/bin/env", ["python3", ToolPaths.tool(script), "--ready-file", readyFile] + arguments,
                                   options: .init(environment: environment))
        let process = self.process
        func announced() -> UInt16? { contents(of: readyFile).split(separator: "\n").first.flatMap { UInt16($0) } }
        guard let port = eventually(timeout: 10, announced, until: { $0 != nil || !process.isRunning }) ?? announced() else {
            throw TestFailure("\(script) did not start; stderr:\n\(process.stderrText)")
        }
        self.port = port
    }

    /// Kills the peer now (it is killed on release anyway).
    func stop() { process.kill() }
}
