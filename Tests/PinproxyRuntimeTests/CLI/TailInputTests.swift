import Foundation
import Testing

/// `pinproxy tail` beyond the live log (SPEC §4): rotated `.gz` files,
/// standard input (`-`), `-f` on a log that does not exist yet, and
/// `NO_COLOR` on a terminal. The binary, on logs made here.
@Suite("pinproxy tail: .gz, -, waiting and NO_COLOR", .serialized)
struct TailInputTests {
    static let events = (1...15).map { TailCommandTests.violation($0) }

    private func writeLog(_ directory: TemporaryDirectory, _ lines: [String] = events, name: String = "violations.jsonl") throws -> String {
        try directory.write(lines.joined(separator: "\n") + "\n", to: name)
    }

    private func gzip(_ file: String, to target: String) throws {
        let result = try ChildProcess.shell("gzip -c '\(file)' > '\(target)'")
        try #require(result.status == 0, "gzip: \(result.errorOutput)")
    }

    @Test("a rotated .gz log is read like the plain one, concatenated members in order")
    func gzipFile() throws {
        let directory = try TemporaryDirectory()
        let log = try writeLog(directory)
        let compressed = log + ".1.gz"
        try gzip(log, to: compressed)
        let plain = try PinproxyBinary.run(["tail", "-n", "4", log])
        let result = try PinproxyBinary.run(["tail", "-n", "4", compressed])
        #expect(result.status == 0)
        #expect(result.errorOutput == "")
        #expect(result.outputLines.count == 4)
        #expect(result.outputLines == plain.outputLines)
        // gzip accepts `cat a.gz b.gz`; so does tail.
        let twice = directory.file("twice.gz")
        try #require(try ChildProcess.shell("cat '\(compressed)' '\(compressed)' > '\(twice)'").status == 0)
        #expect(try PinproxyBinary.run(["tail", "-n", "100", "--json", twice]).outputLines == Self.events + Self.events)
    }

    @Test("a truncated .gz is refused naming zcat, never read as malformed lines; -f on a .gz is a usage error")
    func brokenGzip() throws {
        let directory = try TemporaryDirectory()
        let log = try writeLog(directory, (1...2000).map { TailCommandTests.violation($0) })
        let compressed = log + ".gz"
        try gzip(log, to: compressed)
        let whole = try Data(contentsOf: URL(fileURLWithPath: compressed))
        let truncated = directory.file("truncated.gz")
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: truncated))
        let result = try PinproxyBinary.run(["tail", truncated])
        #expect(result.status == 3)
        #expect(result.errorOutput.contains("zcat \(truncated)"), "stderr:\n\(result.errorOutput)")
        #expect(!result.errorOutput.contains("malformed"), "stderr:\n\(result.errorOutput)")
        let follow = try PinproxyBinary.run(["tail", "-f", compressed])
        #expect(follow.status == 2)
    }

    @Test("- reads standard input, plain or gzip", arguments: [false, true])
    func standardInput(compressed: Bool) throws {
        let directory = try TemporaryDirectory()
        var input = try writeLog(directory)
        if compressed {
            try gzip(input, to: input + ".gz")
            input += ".gz"
        }
        let result = try ChildProcess.shell("'\(PinproxyBinary.path)' tail -n 2 --json - < '\(input)'")
        #expect(result.status == 0, "stderr:\n\(result.errorOutput)")
        #expect(result.outputLines == Array(Self.events.suffix(2)))
    }

    @Test("-f - prints each event as it arrives, and ends with the input")
    func followStandardInput() throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.file("events.fifo")
        try #require(mkfifo(fifo, 0o600) == 0)
        let process = try ChildProcess("/bin/sh", ["-c", "exec '\(PinproxyBinary.path)' tail -f --json - < '\(fifo)'"])
        // A FIFO opened for writing without a reader fails with ENXIO: wait for the reader.
        let writer = eventually(timeout: 10, { open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC) }, until: { $0 >= 0 })
        try #require(writer >= 0, "tail never opened the FIFO; stderr:\n\(process.stderrText)")
        func send(_ line: String) {
            let bytes = Array((line + "\n").utf8)
            #expect(bytes.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) } == bytes.count)
        }
        send(Self.events[0])
        // Printed while the writer is still open: not held until end of input.
        #expect(eventually(timeout: 5) { process.stdoutText == Self.events[0] + "\n" }, "stdout:\n\(process.stdoutText)")
        send(Self.events[1])
        #expect(eventually(timeout: 5) { process.stdoutText.split(separator: "\n").count == 2 })
        close(writer)
        #expect(process.waitForExit(timeout: 10) == 0)
        #expect(process.stdoutText == Self.events[0] + "\n" + Self.events[1] + "\n")
    }

    @Test("-f on a log that does not exist yet waits for it, then follows it from its start")
    func followWaitsForTheFile() throws {
        let directory = try TemporaryDirectory()
        let log = directory.file("later/violations.jsonl")
        let process = try PinproxyBinary.start(["tail", "-f", "--json", log])
        try process.waitForStderr(containing: "\(log) does not exist yet; waiting for it", timeout: 10)
        try FileManager.default.createDirectory(atPath: directory.file("later"), withIntermediateDirectories: false)
        try (Self.events[0] + "\n" + Self.events[1] + "\n").write(toFile: log, atomically: true, encoding: .utf8)
        #expect(eventually(timeout: 5) { process.stdoutText.split(separator: "\n").map(String.init) == Array(Self.events.prefix(2)) },
                "stdout:\n\(process.stdoutText)")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        handle.seekToEndOfFile()
        handle.write(Data((Self.events[2] + "\n").utf8))
        try handle.close()
        #expect(eventually(timeout: 5) { process.stdoutText.split(separator: "\n").map(String.init) == Array(Self.events.prefix(3)) })
        #expect(process.isRunning)
    }

    /// Runs `pinproxy tail -n 1 log` with stdout on a pseudo-terminal, NO_COLOR
    /// as given (nil: unset), and returns what the terminal received.
    private func onTerminal(_ log: String, noColor: String?) throws -> String {
        let pty = """
        import os, pty, subprocess, sys
        master, slave = pty.openpty()
        child = subprocess.Popen(sys.argv[1:], stdout=slave)
        os.close(slave)
        out = b""
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            out += data
        sys.stdout.buffer.write(out)
        sys.exit(child.wait())
        """
        let setting = noColor.map { ["NO_COLOR=\($0)"] } ?? ["-u", "NO_COLOR"]
        let result = try ChildProcess.run("/usr/bin/env", setting + ["python3", "-c", pty, PinproxyBinary.path, "tail", "-n", "1", log])
        try #require(result.status == 0, "stderr:\n\(result.errorOutput)")
        return result.output
    }

    @Test("on a terminal BLOCKED is red, unless NO_COLOR is set to a non-empty value (no-color.org)")
    func noColor() throws {
        let directory = try TemporaryDirectory()
        let log = try writeLog(directory)
        let red = "\u{1B}[1;31mBLOCKED"
        #expect(try onTerminal(log, noColor: nil).contains(red))
        #expect(try onTerminal(log, noColor: "").contains(red))
        let plain = try onTerminal(log, noColor: "1")
        #expect(!plain.contains("\u{1B}["), "\(plain.debugDescription)")
        #expect(plain.contains("BLOCKED  api.example.com:443  pin_mismatch"))
    }
}
