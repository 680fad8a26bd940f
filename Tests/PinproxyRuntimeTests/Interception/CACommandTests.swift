import Foundation
import Testing

/// `pinproxy ca init|show|export|install` and the CA in `check` and `run`,
/// run as the built binary (SPEC §1, §3.1). `install` writes to a temporary
/// store (`PINPROXY_CA_STORE_DIR`) and runs a recording script instead of
/// update-ca-certificates (`PINPROXY_UPDATE_CA_CERTIFICATES`): the tests
/// never touch the system store.
@Suite("pinproxy ca and the CA in check and run")
struct CACommandTests {
    let scratch: TemporaryDirectory
    var ca: String { scratch.file("state/ca") }

    init() throws {
        scratch = try TemporaryDirectory()
    }

    @discardableResult
    func config(hosts: String, interception: Bool = true, name: String = "pinproxy.json") throws -> String {
        try scratch.write("""
            { "listeners": [{ "listen": "127.0.0.1:18931", "mode": "forward" }],
              "violation_log": "\(scratch.file("violations.jsonl"))",
              \(interception ? "\"interception\": { \"ca_dir\": \"\(ca)\" }," : "")
              "hosts": { \(hosts) } }
            """, to: name)
    }

    func pinproxy(_ arguments: [String], environment: [String: String] = [:]) throws -> ChildProcess.Result {
        try PinproxyBinary.run(arguments, environment: environment, timeout: 60)
    }

    /// A shell script in the scratch directory, executable, standing in for a system tool.
    func executableScript(_ text: String, named name: String) throws -> String {
        let path = try scratch.write(text, to: name)
        chmod(path, 0o755)
        return path
    }

    static let twoHosts = #""api.example.com": { "policy": "default" }, "**.example.org": { "policy": "default" }"#

    @Test("init creates the CA for the config's hosts; a second init changes nothing and says so")
    func initIsIdempotent() throws {
        let file = try config(hosts: Self.twoHosts)
        let created = try pinproxy(["ca", "init", "--config", file])
        #expect(created.status == 0, "\(created.combinedOutput)")
        #expect(created.output.hasPrefix("created the interception CA in \(ca)\n  names: api.example.com, example.org\n"))
        #expect(created.output.contains("run `pinproxy ca install`"))
        let root = try String(contentsOfFile: ca + "/root.pem", encoding: .utf8)
        let again = try pinproxy(["ca", "init", "--config", file])
        #expect(again.status == 0)
        #expect(again.output.hasPrefix("the interception CA in \(ca) already covers every intercepted host of \(file): nothing changed\n"))
        #expect(try String(contentsOfFile: ca + "/root.pem", encoding: .utf8) == root)
    }

    @Test("init after a host outside the CA was added issues a new generation (new root) and says clients and daemon must follow")
    func initReissues() throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        let before = try pinproxy(["ca", "show", "--config", file])
        try config(hosts: Self.twoHosts + #", "git.example.net": { "policy": "default" }"#)
        let reissued = try pinproxy(["ca", "init", "--config", file])
        #expect(reissued.status == 0, "\(reissued.combinedOutput)")
        #expect(reissued.output.hasPrefix("issued a new interception CA generation in \(ca), replacing the previous one: it does not cover git.example.net\n"))
        #expect(reissued.output.contains("names: api.example.com, example.org, git.example.net"))
        #expect(reissued.output.contains("run `pinproxy ca install`"))
        #expect(reissued.output.contains("reload the daemon"))
        let after = try pinproxy(["ca", "show", "--config", file])
        #expect(before.output.split(separator: "\n")[3] != after.output.split(separator: "\n")[3], "the generation fingerprint changes")
    }

    @Test("show prints path, names, expiry, generation and the hosts not covered")
    func show() throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        try config(hosts: Self.twoHosts + #", "git.example.net": { "policy": "default" }, "10.1.2.3": { "policy": "default" }"#)
        let shown = try pinproxy(["ca", "show", "--config", file])
        #expect(shown.status == 0, "\(shown.combinedOutput)")
        let lines = shown.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 7)
        #expect(lines[0] == "interception: CA \(ca)")
        #expect(lines[1] == "  names: api.example.com, example.org")
        #expect(lines[2].hasPrefix("  expires: 20") && lines[2].hasSuffix("(in 1094 days)"))
        #expect(lines[3].hasPrefix("  generation: sha256 ") && lines[3].count == "  generation: sha256 ".count + 64)
        #expect(lines[4] == "  connect_ports: 443")
        #expect(lines[5] == "  hosts not covered: git.example.net (CONNECT gets 403 until `pinproxy ca init` re-issues the CA)")
        #expect(lines[6] == "  never intercepted: 10.1.2.3 (IP literals: the CA excludes every IP address)")
    }

    @Test("export prints the root certificate exactly as stored")
    func export() throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        let exported = try pinproxy(["ca", "export", "--config", file])
        #expect(exported.status == 0)
        #expect(exported.output == (try String(contentsOfFile: ca + "/root.pem", encoding: .utf8)))
        #expect(exported.errorOutput == "")
    }

    @Test("install copies the root into the store directory (0644), runs the update command with --fresh, and names each runtime's store")
    func install() throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        let record = scratch.file("update-called")
        let script = try executableScript("#!/bin/sh\necho \"$@\" >> \(record)\n", named: "update-ca-certificates")
        let store = scratch.file("store")
        let installed = try pinproxy(["ca", "install", "--config", file],
                                     environment: ["PINPROXY_CA_STORE_DIR": store, "PINPROXY_UPDATE_CA_CERTIFICATES": script])
        #expect(installed.status == 0, "\(installed.combinedOutput)")
        #expect(try String(contentsOfFile: store + "/pinproxy.crt", encoding: .utf8)
                == (try String(contentsOfFile: ca + "/root.pem", encoding: .utf8)))
        #expect(FileManager.default.permissions(of: store + "/pinproxy.crt") == 0o644)
        #expect(try String(contentsOfFile: record, encoding: .utf8) == "--fresh\n")
        for hint in ["REQUESTS_CA_BUNDLE=", "SSL_CERT_FILE=", "NODE_EXTRA_CA_CERTS=\(store)/pinproxy.crt",
                     "keytool -importcert -cacerts", "Go programs", "only on intermediates"] {
            #expect(installed.output.contains(hint), "\(hint)")
        }
    }

    @Test("install fails with exit 3 when the update command fails, and says what is left")
    func installUpdateFails() throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        let script = try executableScript("#!/bin/sh\nexit 4\n", named: "failing-update")
        let result = try pinproxy(["ca", "install", "--config", file],
                                  environment: ["PINPROXY_CA_STORE_DIR": scratch.file("store"), "PINPROXY_UPDATE_CA_CERTIFICATES": script])
        #expect(result.status == 3)
        #expect(result.errorOutput.contains("exited with status 4: the root is in \(scratch.file("store"))/pinproxy.crt"))
    }

    @Test("a config without interception: every ca action exits 1 naming the key to add", arguments: ["init", "show", "export", "install"])
    func noInterception(action: String) throws {
        let file = try config(hosts: Self.twoHosts, interception: false)
        let result = try pinproxy(["ca", action, "--config", file])
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("no \"interception\" section"))
        #expect(result.errorOutput.contains("add \"interception\": { \"ca_dir\":"))
    }

    @Test("usage errors exit 2", arguments: [["ca"], ["ca", "renew"], ["ca", "init", "extra"], ["ca", "show", "--log-level", "info"]])
    func usage(arguments: [String]) throws {
        #expect(try pinproxy(arguments).status == 2)
    }

    @Test("show, export and install before init exit 1 naming ca init with the config", arguments: ["show", "export", "install"])
    func beforeInit(action: String) throws {
        let file = try config(hosts: Self.twoHosts)
        let result = try pinproxy(["ca", action, "--config", file])
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("run `pinproxy ca init --config \(file)` to create it"))
    }

    @Test("init refuses to replace a CA whose key is readable by others: the operator decides")
    func initKeepsLooseCA() throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        chmod(ca + "/issuing.key", 0o640)
        let result = try pinproxy(["ca", "init", "--config", file])
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("run `chmod 600 \(ca)/issuing.key`"))
    }

    // MARK: check and run

    @Test("check prints the interception block and exits 0 when the CA covers every host")
    func checkCovered() throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        let result = try pinproxy(["check", "--config", file])
        #expect(result.status == 0, "\(result.combinedOutput)")
        #expect(result.output.hasPrefix("\(file): OK\n"))
        #expect(result.output.contains("\n  interception: CA \(ca)\n    names: api.example.com, example.org\n    expires: "))
        #expect(result.output.contains("\n    hosts not covered: none\n"))
        #expect(result.errorOutput == "")
    }

    @Test("check exits 1 for a host the CA does not cover, naming it and the command that re-issues")
    func checkUncovered() throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        try config(hosts: Self.twoHosts + #", "git.example.net": { "policy": "default" }"#)
        let result = try pinproxy(["check", "--config", file])
        #expect(result.status == 1)
        #expect(result.output.hasPrefix("\(file): FAILED (intercepted hosts not covered by the interception CA)\n"))
        #expect(result.output.contains("    hosts not covered: git.example.net"))
        #expect(result.errorOutput.contains("1 intercepted host is not covered by the interception CA in \(ca): git.example.net; run `pinproxy ca init --config \(file)`"))
    }

    @Test("check exits 1 without a CA, naming ca init")
    func checkMissingCA() throws {
        let file = try config(hosts: Self.twoHosts)
        let result = try pinproxy(["check", "--config", file])
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("$.interception.ca_dir: \(ca): no interception CA here yet; run `pinproxy ca init --config \(file)` to create it"))
    }

    @Test("run refuses to start with a key at 0644 (exit 1), naming the chmod", arguments: ["issuing.key", "leaf.key"])
    func runRefusesLooseKey(key: String) throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        chmod(ca + "/" + key, 0o644)
        let result = try pinproxy(["run", "--config", file])
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("\(ca)/\(key): permissions 0644 are too open"))
        #expect(result.errorOutput.contains("run `chmod 600 \(ca)/\(key)`"))
    }

    @Test("run refuses to start without a CA (exit 1), naming ca init --config")
    func runRefusesMissingCA() throws {
        let file = try config(hosts: Self.twoHosts)
        let result = try pinproxy(["run", "--config", file])
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("run `pinproxy ca init --config \(file)` to create it"))
    }

    @Test("reload: a host outside the CA logs a warning naming ca init; a loosened key is rejected and the old generation keeps serving")
    func reload() throws {
        let file = try config(hosts: Self.twoHosts)
        try String(contentsOfFile: file, encoding: .utf8).replacingOccurrences(of: "18931", with: "\(ToolPaths.freePort())")
            .write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        let daemon = try PinproxyBinary.startDaemon(configuration: file)
        try daemon.waitForStderr(containing: "config generation 1", timeout: 20)

        let text = try String(contentsOfFile: file, encoding: .utf8)
            .replacingOccurrences(of: #""api.example.com""#, with: #""git.example.net": { "policy": "default" }, "api.example.com""#)
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        daemon.send(SIGHUP)
        try daemon.waitForStderr(containing: "configuration generation 2 active", timeout: 20)
        #expect(daemon.stderrText.contains("$.hosts[\"git.example.net\"]: not covered by the interception CA in \(ca)"))
        #expect(daemon.stderrText.contains("run `pinproxy ca init --config \(file)` to re-issue the CA"))

        chmod(ca + "/leaf.key", 0o644)
        daemon.send(SIGHUP)
        try daemon.waitForStderr(containing: "rejected, keeping generation 2", timeout: 20)
        #expect(daemon.stderrText.contains("\(ca)/leaf.key: permissions 0644 are too open"))
        #expect(daemon.isRunning)
        daemon.send(SIGTERM)
        #expect(daemon.waitForExit(timeout: 20) == 0)
    }
}
