import Foundation
import Testing
@testable import PinproxyRuntime
#if canImport(Glibc)
import Glibc
#endif

@Suite("ViolationLogFile", .serialized)
struct ViolationLogFileTests {
    private static func line(_ index: Int) -> String {
        "{\"event\":\"pin_violation\",\"n\":\(index)}\n"
    }

    private static func lines(_ range: Range<Int>) -> String {
        range.map(line).joined()
    }

    @Test("every line is on disk, in order, once whenDurable(true) has been called for it")
    func linesInOrder() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("violations.jsonl")
        let log = CapturedLog()
        let file = try ViolationLogFile(path: path, logger: log.logger)
        let recorder = DurabilityRecorder()
        for index in 0..<200 {
            file.append(Array(Self.line(index).utf8), whenDurable: recorder.callback(index))
        }
        let calls = recorder.waitForCalls(200)
        #expect(calls.count == 200)
        #expect(calls.allSatisfy { $0.isDurable })
        #expect(Set(calls.map(\.index)) == Set(0..<200))
        #expect(contents(of: path) == Self.lines(0..<200))
        file.close()
        #expect(log.drain() == "")
    }

    @Test("a new file is created with mode 0640 (less what the umask removes)")
    func createsWithMode() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("new.jsonl")
        let previous = umask(0o022)
        defer { umask(previous) }
        let file = try ViolationLogFile(path: path, logger: CapturedLog().logger)
        file.close()
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o640)
    }

    @Test("opening a file whose last line was torn by a crash starts the next line on a line of its own",
          arguments: [("torn", "{\"event\":\"pin_vio", "{\"event\":\"pin_vio\n"),
                      ("whole", "{\"a\":1}\n", "{\"a\":1}\n"),
                      ("empty", "", "")])
    func healsTornLine(name: String, existing: String, healed: String) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("\(name).jsonl")
        try existing.write(toFile: path, atomically: false, encoding: .utf8)
        let file = try ViolationLogFile(path: path, logger: CapturedLog().logger)
        let recorder = DurabilityRecorder()
        file.append(Array(Self.line(1).utf8), whenDurable: recorder.callback(1))
        #expect(recorder.waitForCalls(1).map(\.isDurable) == [true])
        file.close()
        #expect(contents(of: path) == healed + Self.line(1))
    }

    @Test("a log that cannot be opened at start throws an error naming the path and the errno text")
    func openFailureNamesPath() throws {
        let path = "/nonexistent-pinproxy-dir/violations.jsonl"
        let error = #expect(throws: ViolationLogError.self) {
            _ = try ViolationLogFile(path: path, logger: CapturedLog().logger)
        }
        #expect(error == ViolationLogError(path: path, operation: "open", code: ENOENT))
        #expect(error?.description == "cannot open violation log \(path): No such file or directory (errno 2)")
    }

    /// How the test rotates the file in the middle of a stream of appends.
    enum Rotation: String, CaseIterable, CustomTestStringConvertible {
        case renameDetected, renameThenReopen, deleteDetected
        var testDescription: String { rawValue }
    }

    @Test("rotation while lines arrive loses no line and duplicates none", arguments: Rotation.allCases)
    func rotationWhileWriting(rotation: Rotation) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("violations.jsonl")
        let rotated = directory.file("violations.jsonl.1")
        let file = try ViolationLogFile(path: path, logger: CapturedLog().logger)
        let recorder = DurabilityRecorder()
        // Kept open so the lines written to a deleted file can still be read.
        let oldDescriptor = open(path, O_RDONLY)
        defer { close(oldDescriptor) }
        for index in 0..<400 {
            if index == 200 {
                switch rotation {
                case .renameDetected:
                    #expect(rename(path, rotated) == 0)
                case .renameThenReopen:
                    #expect(rename(path, rotated) == 0)
                    file.reopen()
                case .deleteDetected:
                    #expect(unlink(path) == 0)
                }
            }
            file.append(Array(Self.line(index).utf8), whenDurable: recorder.callback(index))
            // Deliberate pacing: the appends span many group commits, so the
            // rotation lands between two of them and not before the first.
            if index % 10 == 0 { usleep(500) }
        }
        let calls = recorder.waitForCalls(400)
        file.close()
        #expect(calls.count == 400)
        #expect(calls.allSatisfy { $0.isDurable })
        var old: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while case let count = pread(oldDescriptor, &buffer, buffer.count, off_t(old.count)), count > 0 {
            old += buffer[0..<count]
        }
        let combined = String(decoding: old, as: UTF8.self) + contents(of: path)
        #expect(combined == Self.lines(0..<400))
        #expect(!contents(of: path).isEmpty)
    }

    @Test("when the file cannot be created the line is reported false, kept, and written once it can be")
    func retriesUntilWritable() throws {
        let directory = try TemporaryDirectory()
        let logDirectory = directory.file("logs")
        let path = logDirectory + "/violations.jsonl"
        #expect(mkdir(logDirectory, 0o755) == 0)
        let log = CapturedLog()
        let file = try ViolationLogFile(path: path, logger: log.logger, maxQueuedLines: 2)
        // Root ignores permissions, so the unwritable case is a directory that is gone.
        #expect(unlink(path) == 0)
        #expect(rmdir(logDirectory) == 0)
        let recorder = DurabilityRecorder()
        file.append(Array(Self.line(0).utf8), whenDurable: recorder.callback(0))
        #expect(recorder.waitForCalls(1).map(\.isDurable) == [false])
        file.append(Array(Self.line(1).utf8), whenDurable: recorder.callback(1))
        file.append(Array(Self.line(2).utf8), whenDurable: recorder.callback(2))
        let refused = recorder.waitForCalls(3)
        #expect(refused.map(\.index).sorted() == [0, 1, 2])
        #expect(refused.allSatisfy { !$0.isDurable })
        #expect(file.droppedLines == 1)
        let reported = log.drain()
        #expect(reported.contains("cannot open violation log \(path): No such file or directory"))
        #expect(reported.contains("kept queued (\(path)): {\"event\":\"pin_violation\",\"n\":0}"))
        #expect(reported.contains("dropped an event because the queue is full (2 lines); event follows: {\"event\":\"pin_violation\",\"n\":2}"))

        #expect(mkdir(logDirectory, 0o755) == 0)
        #expect(eventually { contents(of: path) == Self.lines(0..<2) })
        // Lines 0 and 1 still count against the 2-line queue until their
        // fdatasync returns; give the writer that moment so line 3 is not
        // (correctly) refused as overflow on a loaded machine.
        usleep(500_000)
        file.append(Array(Self.line(3).utf8), whenDurable: recorder.callback(3))
        let calls = recorder.waitForCalls(4)
        #expect(calls.last.map { [$0.index: $0.isDurable] } == [3: true])
        file.close()
        #expect(contents(of: path) == Self.lines(0..<2) + Self.line(3))
        #expect(log.drain().contains("writing to \(path) again"))
    }

    @Test("close flushes queued lines and later appends are refused with false")
    func closeFlushes() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("violations.jsonl")
        let file = try ViolationLogFile(path: path, logger: CapturedLog().logger)
        let recorder = DurabilityRecorder()
        for index in 0..<50 {
            file.append(Array(Self.line(index).utf8), whenDurable: recorder.callback(index))
        }
        file.close()
        #expect(contents(of: path) == Self.lines(0..<50))
        file.append(Array(Self.line(50).utf8), whenDurable: recorder.callback(50))
        let calls = recorder.waitForCalls(51)
        #expect(calls.filter { $0.isDurable }.count == 50)
        #expect(calls.last.map { [$0.index: $0.isDurable] } == [50: false])
        #expect(file.droppedLines == 0)
    }
}
