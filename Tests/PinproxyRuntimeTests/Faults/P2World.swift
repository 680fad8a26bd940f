import Foundation
import Testing

/// The peers of a process-level fault: a well-behaved upstream behind
/// `api.example.com:8443`, a man in the middle behind `api.example.com:443`
/// (a valid-looking chain for the same name from a root the trust store does
/// not hold, so every request there is blocked as `chain_untrusted` and
/// logged), and a config file for the real binary.
final class P2World {
    let good: TestUpstream
    let mitm: TestUpstream
    let pki: UpstreamPKI
    let forwardPort: UInt16
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
        pki = try UpstreamPKI(directory: directory.path)
        let impostor = try UpstreamPKI(directory: directory.path, name: "impostor",
                                       chain: TestPKI.chain(rootName: "Impostor Root CA"))
        good = try TestUpstream(certificateChain: pki.servedChainFile, key: pki.keyFile, directory: directory.path)
        mitm = try TestUpstream(certificateChain: impostor.servedChainFile, key: impostor.keyFile,
                                directory: directory.path)
        forwardPort = ToolPaths.freePort()
    }

    var proxyArguments: [String] { ["-x", "http://127.0.0.1:\(forwardPort)"] }
    var goodURL: String { "http://api.example.com:8443/bytes/1000" }
    var mitmURL: String { "http://api.example.com/blocked" }

    /// Writes a config for the binary and returns its path. `extra` is more
    /// JSON5 members (`"log_burst": 100000,`); `timeouts`/`limits` go in those sections.
    func writeConfig(logPath: String, timeouts: String = "", limits: String = "", extra: String = "",
                     name: String = "pinproxy.json") throws -> String {
        let path = directory.path + "/" + name
        try """
        {
          "listeners": [ { "listen": "127.0.0.1:\(forwardPort)", "mode": "forward" } ],
          "violation_log": "\(logPath)",
          "trust_store": "\(pki.rootFile)",
          "resolve": { "api.example.com:443": "127.0.0.1:\(mitm.port)",
                       "api.example.com:8443": "127.0.0.1:\(good.port)" },
          "timeouts": { "shutdown": "10s", \(timeouts) },
          "limits": { \(limits) },
          "threads": 2,
          \(extra)
        }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The request after the fault: a GET to the good upstream answered in full.
    func expectGoodRequestServed(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try Curl.run(proxyArguments + [goodURL], timeout: 10)
        #expect(result.exitCode == 0, sourceLocation: sourceLocation)
        #expect(result.status == 200, sourceLocation: sourceLocation)
        #expect(result.body == FaultBed.pattern(1000), sourceLocation: sourceLocation)
    }

    /// Runs a Tests/Tools/p2_*.py script to its end (bounded) and parses its one JSON line.
    static func runTool(_ script: String, _ arguments: [String], timeout: TimeInterval) throws -> [String: Any] {
        let result = try ChildProcess.run("/usr/bin/env", ["python3", ToolPaths.repositoryRoot + "/Tests/Tools/" + script] + arguments,
                                          timeout: timeout)
        guard let object = try? JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any] else {
            throw TestFailure("\(script) printed no result (exit \(result.status)): \(result.output)\(result.errorOutput)")
        }
        return object
    }

    /// Runs `/bin/sh -c command` and returns its exit status.
    @discardableResult
    static func shell(_ command: String) throws -> Int32 {
        try ChildProcess.shell(command).status
    }
}
