import Foundation
import Testing

/// `pinproxy check` run as a binary: exit codes and messages (SPEC §1).
@Suite struct CheckCommandTests {
    static func config(hosts: String, directory: TemporaryDirectory) -> String {
        """
        { "listeners": [{ "listen": "127.0.0.1:18080", "mode": "forward" }],
          "violation_log": "\(directory.path)/violations.jsonl",
          "hosts": { \(hosts) } }
        """
    }

    @Test("a good configuration exits 0 with a summary of listeners and hosts, pins and expiry")
    func good() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(Self.config(hosts: """
            "api.example.com": { "policy": "pin-public-keys", "expires": "2099-06-30",
              "pins": ["sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="] },
            "*.cdn.example.com": { "policy": "default", "enforce": false }
            """, directory: directory), to: "good.json")
        let result = try PinproxyBinary.run(["check", "--config", file])
        #expect(result.status == 0)
        #expect(result.errorOutput == "")
        #expect(result.outputLines == [
            "\(file): OK",
            "  listener 127.0.0.1:18080 forward",
            "  host api.example.com: pin-public-keys, 2 pins, pins expire 2099-06-30",
            "  host *.cdn.example.com: default, report-only",
            "  default_policy: default",
            "  violation log: \(directory.path)/violations.jsonl",
        ])
    }

    @Test("a single pin passes with a warning: line on stderr")
    func warning() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(Self.config(hosts: """
            "api.example.com": { "policy": "pin-public-keys", "pins": ["sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="] }
            """, directory: directory), to: "one-pin.json")
        let result = try PinproxyBinary.run(["check", "--config", file])
        #expect(result.status == 0)
        #expect(result.errorOutput.hasPrefix("warning: $.hosts[\"api.example.com\"].pins: only one pin"))
    }

    @Test("a typo'd key exits 1 naming the JSON path and suggesting the key")
    func typo() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(Self.config(hosts: """
            "api.example.com": { "policy": "pin-public-keys", "pinz": ["sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="] }
            """, directory: directory), to: "typo.json")
        let result = try PinproxyBinary.run(["check", "--config", file])
        #expect(result.status == 1)
        #expect(result.output == "")
        #expect(result.errorOutput.contains("$.hosts[\"api.example.com\"].pinz: unknown key"))
        #expect(result.errorOutput.contains("did you mean \"pins\"?"))
    }

    @Test("a missing pin file exits 1 naming the path")
    func missingFile() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(Self.config(hosts: """
            "cdn.example.com": { "policy": "pin-certificates", "certificates": ["\(directory.path)/absent.pem"] }
            """, directory: directory), to: "missing.json")
        let result = try PinproxyBinary.run(["check", "--config", file])
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("$.hosts[\"cdn.example.com\"].certificates[0]: certificate file \"\(directory.path)/absent.pem\" does not exist"))
    }

    @Test("a garbage PEM is caught by check, not at start: OpenSSL loads every file")
    func garbageFile() throws {
        let directory = try TemporaryDirectory()
        let garbage = try directory.write("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n", to: "garbage.pem")
        let file = try directory.write(Self.config(hosts: """
            "internal.example": { "policy": "anchors", "anchors": ["\(garbage)"] }
            """, directory: directory), to: "garbage.json")
        let result = try PinproxyBinary.run(["check", "--config", file])
        #expect(result.status == 1)
        // The line of the member that names the file, as every other config problem has.
        let line = try #require(Self.line(naming: garbage, in: file))
        #expect(result.errorOutput.contains("\(file):\(line): $.hosts[\"internal.example\"].anchors[0]: \(garbage): "),
                "stderr:\n\(result.errorOutput)")
    }

    @Test("a garbage client key names the key file and the config line of client_key, in check and in run")
    func garbageKey() throws {
        let directory = try TemporaryDirectory()
        let certificate = try UpstreamPKI(directory: directory.path).rootFile
        let key = try directory.write("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n", to: "client.key")
        let file = try directory.write(Self.config(hosts: """
            "mtls.example": { "policy": "default",
              "client_certificate": "\(certificate)",
              "client_key": "\(key)" }
            """, directory: directory), to: "garbage-key.json")
        let line = try #require(Self.line(naming: key, in: file))
        let located = "\(file):\(line): $.hosts[\"mtls.example\"].client_key: \(key): "
        let check = try PinproxyBinary.run(["check", "--config", file])
        #expect(check.status == 1)
        #expect(check.errorOutput.contains(located), "stderr:\n\(check.errorOutput)")
        let run = try ChildProcess.run(PinproxyBinary.path, ["run", "--config", file], options: .init(signalMask: .clean), timeout: 20)
        #expect(run.status == 1)
        #expect(run.errorOutput.contains(located), "stderr:\n\(run.errorOutput)")
    }

    /// The 1-based line of `file` on which `text` first appears.
    static func line(naming text: String, in file: String) -> Int? {
        contents(of: file).split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains(text) }.map { $0 + 1 }
    }

    @Test("usage errors exit 2", arguments: [["check", "extra"], ["check", "--config"], ["check", "-f"], ["pins"], ["probe"], ["tail", "-n", "x"], ["tail", "a", "b"], ["pins", "--cert"], ["frobnicate", "--nope"]])
    func usage(arguments: [String]) throws {
        let result = try PinproxyBinary.run(arguments)
        #expect(result.status == 2)
        #expect(result.errorOutput.hasPrefix("pinproxy: "))
    }
}
