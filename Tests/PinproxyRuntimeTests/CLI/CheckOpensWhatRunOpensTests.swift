import Foundation
import Testing

/// SPEC §1: `check` opens everything `run` would open (the trust store, CRL
/// files, the interception CA) and fails where `run` fails: for each file
/// that `run` refuses, `check` exits 1 naming the same file.
@Suite("pinproxy check fails where run fails", .serialized)
struct CheckOpensWhatRunOpensTests {
    /// A file `run` must read, made unusable; `members` are the config members naming it.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        /// Config members, given the garbage file's path and the test directory.
        var members: @Sendable (_ garbage: String, _ directory: String) -> String
        /// What both messages name, given the same.
        var named: @Sendable (_ garbage: String, _ directory: String) -> String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "a trust store that is not PEM",
             members: { garbage, _ in #""trust_store": "\#(garbage)","# },
             named: { garbage, _ in "$.trust_store: load trust store \(garbage)" }),
        Case(name: "a CRL file that is not a CRL",
             members: { garbage, _ in #""hosts": { "api.example.com": { "policy": "default", "crl_files": ["\#(garbage)"] } },"# },
             named: { garbage, _ in "$.hosts[\"api.example.com\"].crl_files[0]: \(garbage)" }),
        Case(name: "an interception ca_dir with no CA in it",
             members: { _, directory in #""interception": { "ca_dir": "\#(directory)/no-ca" }, "hosts": { "api.example.com": { "policy": "default" } },"# },
             named: { _, directory in "$.interception.ca_dir" }),
    ]

    @Test("check exits 1 naming the file, as run does", arguments: cases)
    func failsAsRunFails(_ testCase: Case) throws {
        let directory = try TemporaryDirectory()
        let garbage = try directory.write("-----BEGIN X509 CRL-----\nbm90IGEgQ1JM\n-----END X509 CRL-----\n", to: "garbage.pem")
        let file = try directory.write("""
            { "listeners": [{ "listen": "127.0.0.1:\(ToolPaths.freePort())", "mode": "forward" }],
              "violation_log": "\(directory.path)/violations.jsonl",
              \(testCase.members(garbage, directory.path)) }
            """, to: "pinproxy.json")
        let named = testCase.named(garbage, directory.path)
        let check = try PinproxyBinary.run(["check", "--config", file])
        #expect(check.status == 1)
        #expect(check.errorOutput.contains(named), "stderr:\n\(check.errorOutput)")
        let run = try ChildProcess.run(PinproxyBinary.path, ["run", "--config", file], options: .init(signalMask: .clean), timeout: 20)
        #expect(run.status == 1)
        #expect(run.errorOutput.contains(named), "stderr:\n\(run.errorOutput)")
    }
}
