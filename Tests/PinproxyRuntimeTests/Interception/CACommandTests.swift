import Foundation
import Testing

/// `pinproxy ca init|show|export|install` and the CA in `check` and `run`,
/// run as the built binary (SPEC §1, §3.1). `install` writes to a temporary
/// store (`PINPROXY_CA_STORE_DIR`) and runs a recording script instead of
/// update-ca-certificates (`PINPROXY_UPDATE_CA_CERTIFICATES`): the tests
/// never touch the system store.
@Suite("pinproxy ca and the CA in check and run")
struct CACommandTests {
    let scratch: CAScratch
    var ca: String { scratch.file("state/ca") }

    init() throws {
        scratch = try CAScratch()
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

    func pinproxy(_ arguments: [String], environment: [String: String] = [:]) throws -> CAProcess.Result {
        guard FileManager.default.isExecutableFile(atPath: CAProcess.pinproxy) else {
            throw CATestFailure("\(CAProcess.pinproxy) is missing: run `swift build` first")
        }
        return try CAProcess.run(CAProcess.pinproxy, arguments, environment: environment, timeout: 60)
    }

    static let twoHosts = #""api.example.com": { "policy": "default" }, "**.example.org": { "policy": "default" }"#

    @Test("init creates the CA for the config's hosts; a second init changes nothing and says so")
    func initIsIdempotent() throws {
        let file = try config(hosts: Self.twoHosts)
        let created = try pinproxy(["ca", "init", "--config", file])
        #expect(created.status == 0, "\(created.output)")
        #expect(created.stdout.hasPrefix("created the interception CA in \(ca)\n  names: api.example.com, example.org\n"))
        #expect(created.stdout.contains("run `pinproxy ca install`"))
        let root = try String(contentsOfFile: ca + "/root.pem", encoding: .utf8)
        let again = try pinproxy(["ca", "init", "--config", file])
        #expect(again.status == 0)
        #expect(again.stdout.hasPrefix("the interception CA in \(ca) already covers every intercepted host of \(file): nothing changed\n"))
        #expect(try String(contentsOfFile: ca + "/root.pem", encoding: .utf8) == root)
    }

    @Test("init after a host outside the CA was added issues a new generation (new root) and says clients and daemon must follow")
    func initReissues() throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        let before = try pinproxy(["ca", "show", "--config", file])
        try config(hosts: Self.twoHosts + #", "git.example.net": { "policy": "default" }"#)
        let reissued = try pinproxy(["ca", "init", "--config", file])
        #expect(reissued.status == 0, "\(reissued.output)")
        #expect(reissued.stdout.hasPrefix("issued a new interception CA generation in \(ca), replacing the previous one: it does not cover git.example.net\n"))
        #expect(reissued.stdout.contains("names: api.example.com, example.org, git.example.net"))
        #expect(reissued.stdout.contains("run `pinproxy ca install`"))
        #expect(reissued.stdout.contains("reload the daemon"))
        let after = try pinproxy(["ca", "show", "--config", file])
        #expect(before.stdout.split(separator: "\n")[3] != after.stdout.split(separator: "\n")[3], "the generation fingerprint changes")
    }

    @Test("show prints path, names, expiry, generation and the hosts not covered")
    func show() throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        try config(hosts: Self.twoHosts + #", "git.example.net": { "policy": "default" }, "10.1.2.3": { "policy": "default" }"#)
        let shown = try pinproxy(["ca", "show", "--config", file])
        #expect(shown.status == 0, "\(shown.output)")
        let lines = shown.stdout.split(separator: "\n").map(String.init)
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
        #expect(exported.stdout == (try String(contentsOfFile: ca + "/root.pem", encoding: .utf8)))
        #expect(exported.stderr == "")
    }

    @Test("install copies the root into the store directory (0644), runs the update command with --fresh, and names each runtime's store")
    func install() throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        let record = scratch.file("update-called")
        let script = try scratch.write("#!/bin/sh\necho \"$@\" >> \(record)\n", to: "update-ca-certificates", mode: 0o755)
        let store = scratch.file("store")
        let installed = try pinproxy(["ca", "install", "--config", file],
                                     environment: ["PINPROXY_CA_STORE_DIR": store, "PINPROXY_UPDATE_CA_CERTIFICATES": script])
        #expect(installed.status == 0, "\(installed.output)")
        #expect(try String(contentsOfFile: store + "/pinproxy.crt", encoding: .utf8)
                == (try String(contentsOfFile: ca + "/root.pem", encoding: .utf8)))
        #expect(FileManager.default.permissions(of: store + "/pinproxy.crt") == 0o644)
        #expect(try String(contentsOfFile: record, encoding: .utf8) == "--fresh\n")
        for hint in ["REQUESTS_CA_BUNDLE=", "SSL_CERT_FILE=", "NODE_EXTRA_CA_CERTS=\(store)/pinproxy.crt",
                     "keytool -importcert -cacerts", "Go programs", "only on intermediates"] {
            #expect(installed.stdout.contains(hint), "\(hint)")
        }
    }

    @Test("install fails with exit 3 when the update command fails, and says what is left")
    func installUpdateFails() throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        let script = try scratch.write("#!/bin/sh\nexit 4\n", to: "failing-update", mode: 0o755)
        let result = try pinproxy(["ca", "install", "--config", file],
                                  environment: ["PINPROXY_CA_STORE_DIR": scratch.file("store"), "PINPROXY_UPDATE_CA_CERTIFICATES": script])
        #expect(result.status == 3)
        #expect(result.stderr.contains("exited with status 4: the root is in \(scratch.file("store"))/pinproxy.crt"))
    }

    @Test("a config without interception: every ca action exits 1 naming the key to add", arguments: ["init", "show", "export", "install"])
    func noInterception(action: String) throws {
        let file = try config(hosts: Self.twoHosts, interception: false)
        let result = try pinproxy(["ca", action, "--config", file])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no \"interception\" section"))
        #expect(result.stderr.contains("add \"interception\": { \"ca_dir\":"))
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
        #expect(result.stderr.contains("run `pinproxy ca init --config \(file)` to create it"))
    }

    @Test("init refuses to replace a CA whose key is readable by others: the operator decides")
    func initKeepsLooseCA() throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        chmod(ca + "/issuing.key", 0o640)
        let result = try pinproxy(["ca", "init", "--config", file])
        #expect(result.status == 1)
        #expect(result.stderr.contains("run `chmod 600 \(ca)/issuing.key`"))
    }

    // MARK: check and run

    @Test("check prints the interception block and exits 0 when the CA covers every host")
    func checkCovered() throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        let result = try pinproxy(["check", "--config", file])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.hasPrefix("\(file): OK\n"))
        #expect(result.stdout.contains("\n  interception: CA \(ca)\n    names: api.example.com, example.org\n    expires: "))
        #expect(result.stdout.contains("\n    hosts not covered: none\n"))
        #expect(result.stderr == "")
    }

    @Test("check exits 1 for a host the CA does not cover, naming it and the command that re-issues")
    func checkUncovered() throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        try config(hosts: Self.twoHosts + #", "git.example.net": { "policy": "default" }"#)
        let result = try pinproxy(["check", "--config", file])
        #expect(result.status == 1)
        #expect(result.stdout.hasPrefix("\(file): FAILED (intercepted hosts not covered by the interception CA)\n"))
        #expect(result.stdout.contains("    hosts not covered: git.example.net"))
        #expect(result.stderr.contains("1 intercepted host is not covered by the interception CA in \(ca): git.example.net; run `pinproxy ca init --config \(file)`"))
    }

    @Test("check exits 1 without a CA, naming ca init")
    func checkMissingCA() throws {
        let file = try config(hosts: Self.twoHosts)
        let result = try pinproxy(["check", "--config", file])
        #expect(result.status == 1)
        #expect(result.stderr.contains("$.interception.ca_dir: \(ca): no interception CA here yet; run `pinproxy ca init --config \(file)` to create it"))
    }

    @Test("run refuses to start with a key at 0644 (exit 1), naming the chmod", arguments: ["issuing.key", "leaf.key"])
    func runRefusesLooseKey(key: String) throws {
        let file = try config(hosts: Self.twoHosts)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        chmod(ca + "/" + key, 0o644)
        let result = try pinproxy(["run", "--config", file])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(ca)/\(key): permissions 0644 are too open"))
        #expect(result.stderr.contains("run `chmod 600 \(ca)/\(key)`"))
    }

    @Test("run refuses to start without a CA (exit 1), naming ca init --config")
    func runRefusesMissingCA() throws {
        let file = try config(hosts: Self.twoHosts)
        let result = try pinproxy(["run", "--config", file])
        #expect(result.status == 1)
        #expect(result.stderr.contains("run `pinproxy ca init --config \(file)` to create it"))
    }

    @Test("reload: a host outside the CA logs a warning naming ca init; a loosened key is rejected and the old generation keeps serving")
    func reload() throws {
        let port = try Self.freePort()
        let file = try config(hosts: Self.twoHosts)
        try String(contentsOfFile: file, encoding: .utf8).replacingOccurrences(of: "18931", with: "\(port)")
            .write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try pinproxy(["ca", "init", "--config", file]).status == 0)
        let errors = scratch.file("daemon.stderr")
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: CAProcess.pinproxy)
        daemon.arguments = ["run", "--config", file]
        daemon.standardInput = FileHandle.nullDevice
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        try daemon.run()
        defer {
            if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) }
            daemon.waitUntilExit()
        }
        func log() -> String { (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "" }
        func waitFor(_ text: String) -> Bool {
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline && daemon.isRunning {
                if log().contains(text) { return true }
                usleep(20_000)
            }
            return log().contains(text)
        }
        #expect(waitFor("config generation 1"), "\(log())")

        let text = try String(contentsOfFile: file, encoding: .utf8)
            .replacingOccurrences(of: #""api.example.com""#, with: #""git.example.net": { "policy": "default" }, "api.example.com""#)
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        kill(daemon.processIdentifier, SIGHUP)
        #expect(waitFor("configuration generation 2 active"), "\(log())")
        #expect(log().contains("$.hosts[\"git.example.net\"]: not covered by the interception CA in \(ca)"))
        #expect(log().contains("run `pinproxy ca init --config \(file)` to re-issue the CA"))

        chmod(ca + "/leaf.key", 0o644)
        kill(daemon.processIdentifier, SIGHUP)
        #expect(waitFor("rejected, keeping generation 2"), "\(log())")
        #expect(log().contains("\(ca)/leaf.key: permissions 0644 are too open"))
        #expect(daemon.isRunning)
        kill(daemon.processIdentifier, SIGTERM)
        daemon.waitUntilExit()
        #expect(daemon.terminationStatus == 0)
    }

    /// A loopback port nothing listens on right now.
    static func freePort() throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else { throw CATestFailure("cannot bind a loopback port") }
        return UInt16(bigEndian: address.sin_port)
    }
}
