import Foundation
import Testing
@testable import PinproxyRuntime
#if canImport(Glibc)
import Glibc
#endif

/// ENOSPC on a real file system: a 16 KiB tmpfs (needs root and mount permission;
/// the test returns early, recording why, where mounting is not permitted).
@Suite("ViolationLogFile on a full disk", .serialized)
struct ViolationLogFileDiskFullTests {
    private static func run(_ arguments: [String]) -> Int32 {
        (try? ChildProcess.run("/bin/" + arguments[0], Array(arguments.dropFirst())))?.status ?? -1
    }

    @Test("a line cut short by ENOSPC is completed, not rewritten, once space is freed",
          .enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func diskFullCompletesPartialLine() throws {
        let directory = try TemporaryDirectory()
        guard Self.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", directory.path]) == 0 else {
            print("ViolationLogFileDiskFullTests: mount -t tmpfs not permitted here; ENOSPC case not exercised")
            return
        }
        defer { _ = Self.run(["umount", directory.path]) }
        let path = directory.file("violations.jsonl")
        let filler = directory.file("filler")
        // Three of the four pages are taken, so a 6000-byte line fits 4096 bytes, then ENOSPC.
        try Data(repeating: 0x41, count: 3 * 4096).write(to: URL(fileURLWithPath: filler))
        let log = CapturedLog()
        let file = try ViolationLogFile(path: path, logger: log.logger)
        defer { file.close() }
        let line = "{\"event\":\"pin_violation\",\"pad\":\"" + String(repeating: "x", count: 6000 - 35) + "\"}\n"
        #expect(line.utf8.count == 6000)
        let recorder = DurabilityRecorder()
        file.append(Array(line.utf8), whenDurable: recorder.callback(0))
        #expect(recorder.waitForCalls(1).map(\.isDurable) == [false])
        #expect(log.drain().contains("cannot write violation log \(path): No space left on device"))
        // The short write(2) put the first page on disk; the rest must follow it, not a second copy.
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_size == 4096)

        #expect(unlink(filler) == 0)
        #expect(eventually { contents(of: path) == line })
        file.append(Array("{\"n\":2}\n".utf8), whenDurable: recorder.callback(1))
        #expect(recorder.waitForCalls(2).last.map { [$0.index: $0.isDurable] } == [1: true])
        #expect(contents(of: path) == line + "{\"n\":2}\n")
    }
}
