import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `pinproxy check` opens the violation log as `run` does (SPEC §1: it fails
/// where `run` would fail), and writes nothing doing so.
@Suite("pinproxy check: the violation log", .serialized)
struct CheckViolationLogTests {
    static func config(log: String, port: UInt16 = 18080) -> String {
        #"{ "listeners": [{ "listen": "127.0.0.1:\#(port)", "mode": "forward" }], "violation_log": "\#(log)" }"#
    }

    /// `check` exits 1 with run's own message, and `run` on the same file does exit 3 with it.
    private func expectCheckAndRunFail(log: String, because reason: String, in directory: TemporaryDirectory) throws {
        let file = try directory.write(Self.config(log: log, port: ToolPaths.freePort()), to: "pinproxy-\(UUID().uuidString).json")
        let message = "cannot open violation log \(log): \(reason)"
        let check = try PinproxyBinary.run(["check", "--config", file])
        #expect(check.status == 1, "stdout:\n\(check.output)")
        #expect(check.output == "")
        #expect(check.errorOutput.contains("\(file): \(message)"), "stderr:\n\(check.errorOutput)")
        let run = try ChildProcess.run(PinproxyBinary.path, ["run", "--config", file], options: .init(signalMask: .clean), timeout: 20)
        #expect(run.status == 3)
        #expect(run.errorOutput.contains(message), "stderr:\n\(run.errorOutput)")
    }

    @Test("a log in a directory that does not exist fails check as it fails run")
    func missingDirectory() throws {
        let directory = try TemporaryDirectory()
        try expectCheckAndRunFail(log: directory.file("absent/violations.jsonl"), because: "No such file or directory",
                                  in: directory)
    }

    @Test("a log under a regular file fails check as it fails run")
    func parentIsAFile() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("", to: "plain")
        try expectCheckAndRunFail(log: file + "/violations.jsonl", because: "Not a directory", in: directory)
    }

    @Test("a log in a read-only directory fails check as it fails run, absent or present",
          .enabled(if: getuid() == 0, "mounting a read-only tmpfs needs root"),
          arguments: [false, true])
    func readOnlyDirectory(logExists: Bool) throws {
        let directory = try TemporaryDirectory()
        let mountPoint = directory.file("ro")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        guard try ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=16k", "tmpfs", mountPoint]).status == 0 else {
            print("CheckViolationLogTests: mount -t tmpfs not permitted here; read-only case not exercised")
            return
        }
        defer { _ = try? ChildProcess.run("/bin/umount", [mountPoint]) }
        let log = mountPoint + "/violations.jsonl"
        if logExists { try Data("{}\n".utf8).write(to: URL(fileURLWithPath: log)) }
        try #require(try ChildProcess.run("/bin/mount", ["-o", "remount,ro", mountPoint]).status == 0)
        try expectCheckAndRunFail(log: log, because: "Read-only file system", in: directory)
    }

    @Test("check creates no log, and leaves an existing one and its directory as they were")
    func writesNothing() throws {
        let directory = try TemporaryDirectory()
        let absentLog = directory.file("violations.jsonl")
        let absent = try directory.write(Self.config(log: absentLog), to: "absent.json")
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let first = try PinproxyBinary.run(["check", "--config", absent])
        #expect(first.status == 0, "stderr:\n\(first.errorOutput)")
        #expect(first.errorOutput == "")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)

        // A torn last line is what run heals with a write; check must not.
        let presentLog = try directory.write(#"{"event":"pin_violation"}"# + "\n" + #"{"torn"#, to: "present.jsonl")
        let old = Date(timeIntervalSince1970: 1_700_000_000)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: presentLog)
        let present = try directory.write(Self.config(log: presentLog), to: "present.json")
        let second = try PinproxyBinary.run(["check", "--config", present])
        #expect(second.status == 0, "stderr:\n\(second.errorOutput)")
        #expect(contents(of: presentLog) == #"{"event":"pin_violation"}"# + "\n" + #"{"torn"#)
        let modified = try FileManager.default.attributesOfItem(atPath: presentLog)[.modificationDate] as? Date
        #expect(modified == old)
    }

    @Test("a log that opens in a directory where it could not be recreated after rotation is a warning")
    func directoryNotWritableForRotation() throws {
        let directory = try TemporaryDirectory()
        let logDirectory = directory.file("logs")
        try FileManager.default.createDirectory(atPath: logDirectory, withIntermediateDirectories: false)
        let log = logDirectory + "/violations.jsonl"
        try Data().write(to: URL(fileURLWithPath: log))
        // Root writes through modes; an immutable directory refuses even root a new entry.
        let locked = getuid() == 0
            ? try ChildProcess.run("/usr/bin/chattr", ["+i", logDirectory]).status == 0
            : chmod(logDirectory, 0o555) == 0
        guard locked else {
            print("CheckViolationLogTests: cannot make \(logDirectory) unwritable here; rotation case not exercised")
            return
        }
        defer {
            if getuid() == 0 { _ = try? ChildProcess.run("/usr/bin/chattr", ["-i", logDirectory]) } else { chmod(logDirectory, 0o755) }
        }
        let file = try directory.write(Self.config(log: log), to: "pinproxy.json")
        let result = try PinproxyBinary.run(["check", "--config", file])
        #expect(result.status == 0, "stderr:\n\(result.errorOutput)")
        #expect(result.errorOutput.hasPrefix("warning: violation log \(log): cannot create a file in \(logDirectory)"),
                "stderr:\n\(result.errorOutput)")
    }
}
