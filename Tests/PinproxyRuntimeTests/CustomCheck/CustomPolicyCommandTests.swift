import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// SPEC §2.1 through the binary's operator commands: `probe` and `probe
/// --chain` run a custom rule's command exactly as the daemon does and print
/// its answer; `check` refuses a command that is not safe to run.
@Suite("custom policy: check and probe")
struct CustomPolicyCommandTests {
    static func entry(_ checker: CustomChecker, validateChain: Bool = true) -> String {
        #"{ "policy": "custom", "command": ["\#(checker.path)", "--from-test"], "validate_chain": \#(validateChain) }"#
    }

    @Test("probe, live and --chain: the command runs with the served chain and its answer and first line are printed; exit 0 accepts, 1 rejects")
    func probe() throws {
        let directory = try TemporaryDirectory()
        let pki = try UpstreamPKI(directory: directory.path)
        let upstream = try TestUpstream(certificateChain: pki.servedChainFile, key: pki.keyFile, directory: directory.path)
        let accepting = try CustomChecker.accepting(in: directory)
        let good = try ProbeCommandTests.config(port: upstream.port, hostEntry: Self.entry(accepting, validateChain: false),
                                                directory: directory)
        let live = try PinproxyBinary.run(["probe", "api.example.com", "--config", good])
        #expect(live.status == 0, "\(live.combinedOutput)")
        #expect(live.outputLines.contains("  command:  \(accepting.path) --from-test"))
        #expect(live.outputLines.contains("  answer:   exit 0 (accepts); first line: in the inventory"))
        #expect(live.outputLines.contains("  verdict:  ACCEPTED"))
        let offline = try PinproxyBinary.run(["probe", "api.example.com", "--config", good, "--chain", pki.servedChainFile])
        #expect(offline.status == 0, "\(offline.combinedOutput)")
        #expect(offline.outputLines.contains("  answer:   exit 0 (accepts); first line: in the inventory"))
        // Each probe ran the command once, on the chain the server (or the file) holds.
        let runs = accepting.callStarts
        try #require(runs.count == 2)
        let served = pki.chain.served.map { PEMCertificate.encode(der: $0.facts.der) }.joined()
        #expect(runs.map { accepting.input(of: $0.pid) } == [served, served])
        #expect(accepting.environment(of: runs[0].pid)["PINPROXY_PEER_ADDRESS"] == "127.0.0.1:\(upstream.port)")
        #expect(accepting.environment(of: runs[1].pid)["PINPROXY_PEER_ADDRESS"] == "")

        let rejecting = try CustomChecker(in: directory, body: #"cat >/dev/null; echo 'serial 42 revoked'; exit 1"#)
        let bad = try ProbeCommandTests.config(port: upstream.port, hostEntry: Self.entry(rejecting, validateChain: false),
                                               directory: directory)
        for arguments in [["probe", "api.example.com", "--config", bad],
                          ["probe", "api.example.com", "--config", bad, "--chain", pki.servedChainFile]] {
            let rejected = try PinproxyBinary.run(arguments)
            #expect(rejected.status == 1, "\(rejected.combinedOutput)")
            #expect(rejected.outputLines.contains("  answer:   exit 1 (rejects); first line: serial 42 revoked"))
            #expect(rejected.outputLines.contains("  reason:   custom_rejected"))
            #expect(rejected.outputLines.contains("  detail:   serial 42 revoked"))
        }
        let sleeping = try CustomChecker(in: directory, body: "sleep 10")
        let slow = try ProbeCommandTests.config(port: upstream.port, hostEntry: #"{ "policy": "custom", "command": ["\#(sleeping.path)"], "validate_chain": false, "timeout": "300ms" }"#,
                                                directory: directory)
        let timedOut = try PinproxyBinary.run(["probe", "api.example.com", "--config", slow, "--chain", pki.servedChainFile])
        #expect(timedOut.status == 1)
        #expect(timedOut.outputLines.contains("  answer:   none: the custom command timed out after 300ms"))
        #expect(timedOut.outputLines.contains("  reason:   custom_failed"))
    }

    @Test("check describes a custom rule, and refuses (exit 1, naming the path and the fix) a command others can write")
    func check() throws {
        let directory = try TemporaryDirectory()
        let checker = try CustomChecker.accepting(in: directory)
        let config = try ProbeCommandTests.config(port: 9, hostEntry: Self.entry(checker), directory: directory)
        let accepted = try PinproxyBinary.run(["check", "--config", config])
        #expect(accepted.status == 0, "\(accepted.combinedOutput)")
        #expect(accepted.outputLines.contains("  host api.example.com: custom, command \(checker.path) (timeout 2s, verdicts cached 10m)"))
        chmod(checker.path, 0o777)
        let refused = try PinproxyBinary.run(["check", "--config", config])
        #expect(refused.status == 1)
        #expect(refused.combinedOutput.contains(#"$.hosts["api.example.com"].command[0]"#))
        #expect(refused.combinedOutput.contains("is writable by others"))
        #expect(refused.combinedOutput.contains("chmod o-w \(checker.path)"))
    }
}
