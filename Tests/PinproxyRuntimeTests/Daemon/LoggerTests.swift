import Foundation
import Testing
@testable import PinproxyRuntime
#if canImport(Glibc)
import Glibc
#endif

@Suite("Logger")
struct LoggerTests {
    @Test("a line carries the syslog priority prefix only under systemd", arguments: [
        ([String: String](), Logger.Level.error, "pinproxy: cannot bind\n"),
        (["JOURNAL_STREAM": "8:1234"], .error, "<3>pinproxy: cannot bind\n"),
        (["INVOCATION_ID": "abc"], .warning, "<4>pinproxy: cannot bind\n"),
        (["JOURNAL_STREAM": "8:1234"], .info, "<6>pinproxy: cannot bind\n"),
        (["JOURNAL_STREAM": "8:1234"], .debug, "<7>pinproxy: cannot bind\n"),
    ])
    func prefix(environment: [String: String], level: Logger.Level, expected: String) throws {
        var ends: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let logger = Logger(environment: environment, descriptor: ends[1])
        logger.minimumLevel = .debug
        logger.log(level, "pinproxy", "cannot bind")
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = read(ends[0], &buffer, buffer.count)
        #expect(String(decoding: buffer[0..<max(0, count)], as: UTF8.self) == expected)
    }

    @Test("messages below the minimum level are dropped and newlines cannot forge a second line")
    func filteringAndEscaping() {
        let capture = CapturedLog()
        capture.logger.log(.debug, "dns", "hidden at the default level")
        capture.logger.log(.info, "config", "line one\nline two\r")
        capture.logger.minimumLevel = .error
        capture.logger.log(.warning, "tls", "hidden")
        capture.logger.log(.error, "tls", "shown")
        #expect(capture.drain() == "config: line one\\nline two\\r\ntls: shown\n")
    }

    @Test("a logger that outlives its CapturedLog writes to /dev/null: its number is never handed to another socket")
    func outlivesItsCapture() throws {
        var capture: CapturedLog? = CapturedLog()
        let number = try #require(capture).writeEnd
        let logger = try #require(capture).logger
        capture = nil
        var info = stat()
        #expect(fstat(number, &info) == 0 && (info.st_mode & S_IFMT) == S_IFCHR, "descriptor \(number) is no longer /dev/null")
        logger.log(.error, "late", "a line after the capture went")
    }

    @Test("log levels parse from their --log-level names", arguments: Logger.Level.allCases)
    func levelNames(level: Logger.Level) {
        #expect(Logger.Level(rawValue: level.rawValue) == level)
    }

    @Test("a closed peer (EPIPE) or a full socket (EAGAIN) drops the line instead of crashing")
    func brokenStderr() throws {
        var ends: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        let logger = Logger(environment: [:], descriptor: ends[1])
        for _ in 0..<2000 { logger.log(.error, "flood", String(repeating: "x", count: 200)) }
        close(ends[0])
        logger.log(.error, "after", "the reader is gone")
        close(ends[1])
        #expect(logger.minimumLevel == .info)
    }
}
