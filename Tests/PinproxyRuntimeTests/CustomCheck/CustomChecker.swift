import Foundation
@testable import PinproxyRuntime

/// A custom policy's command for a test: a shell script written into the
/// test's directory (0755, in a directory only the test writes), which
/// records every run before it does what the test says: a line in `calls`
/// with its start time, its environment in `env-<pid>` and what it read on
/// standard input in `stdin-<pid>` (when the body reads it).
struct CustomChecker {
    let path: String
    let directory: String
    private let callsFile: String

    /// `body` is shell run after the record; `$STATE` is a directory of
    /// this checker's own for anything else it keeps.
    init(in directory: TemporaryDirectory, name: String = "check-\(UUID().uuidString)", body: String) throws {
        let state = directory.file(name + ".d")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        self.directory = state
        callsFile = state + "/calls"
        let script = """
            #!/bin/sh
            STATE='\(state)'
            echo "$(date +%s%N) $$" >> "$STATE/calls"
            env > "$STATE/env-$$"
            \(body)
            """
        path = try directory.write(script, to: name)
        chmod(path, 0o755)
    }

    /// Reads standard input into `stdin-$$`, then accepts.
    static func accepting(in directory: TemporaryDirectory) throws -> CustomChecker {
        try CustomChecker(in: directory, body: #"cat > "$STATE/stdin-$$"; echo "in the inventory"; exit 0"#)
    }

    /// How many times the command was started.
    var invocations: Int { callStarts.count }

    /// Each run's start, in nanoseconds since the epoch, and its pid, in order.
    var callStarts: [(nanoseconds: UInt64, pid: Int32)] {
        contents(of: callsFile).split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 2, let time = UInt64(parts[0]), let pid = Int32(parts[1]) else { return nil }
            return (time, pid)
        }
    }

    /// The environment of the run with `pid`, as `NAME → value`.
    func environment(of pid: Int32) -> [String: String] {
        var variables: [String: String] = [:]
        for line in contents(of: directory + "/env-\(pid)").split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            variables[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return variables
    }

    /// What the run with `pid` read on standard input.
    func input(of pid: Int32) -> String { contents(of: directory + "/stdin-\(pid)") }

    /// A `hosts` entry for `host` with this command and `extra` keys (JSON5 members, each ending with a comma).
    func rule(host: String = TestWorld.apiHost, extra: String = "") -> String {
        #""\#(host)": { "policy": "custom", "command": ["\#(path)", "--from-test"], \#(extra) }"#
    }

    /// No pooled connection and no session resumption: every request makes a
    /// handshake, so every request reaches the check.
    static let freshHandshakes = #""upstream_reuse": { "idle_per_host": 0, "tls_sessions": false },"#
}
