import Foundation
@testable import PinproxyRuntime
#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under /tmp, removed with everything in it on `remove()`.
struct ScratchDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/pinproxy-test-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        path = String(cString: made)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Records every `whenDurable` call so a test can assert each line got exactly one.
final class DurabilityRecorder: @unchecked Sendable {
    private let condition = NSCondition()
    private var calls: [(index: Int, isDurable: Bool)] = []

    func callback(_ index: Int) -> @Sendable (Bool) -> Void {
        { isDurable in
            self.condition.withLock {
                self.calls.append((index, isDurable))
                self.condition.broadcast()
            }
        }
    }

    /// Waits until `predicate` holds on the calls so far, or `timeout` passes; returns the calls.
    @discardableResult
    func wait(timeout: TimeInterval = 10, until predicate: ([(index: Int, isDurable: Bool)]) -> Bool) -> [(index: Int, isDurable: Bool)] {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(calls) && condition.wait(until: deadline) {}
        return calls
    }

    /// Waits for `count` calls and returns them.
    func waitForCalls(_ count: Int, timeout: TimeInterval = 10) -> [(index: Int, isDurable: Bool)] {
        wait(timeout: timeout) { $0.count >= count }
    }
}

/// The file's bytes as a string ("" when it does not exist).
func contents(of path: String) -> String {
    (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes.
func eventually(timeout: TimeInterval = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// A logger whose lines go to a socket pair, so tests keep stderr clean and can read them.
final class CapturedLog: @unchecked Sendable {
    let logger: Logger
    private let readEnd: Int32
    private let writeEnd: Int32

    init() {
        var ends: [Int32] = [0, 0]
        socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends)
        readEnd = ends[0]
        writeEnd = ends[1]
        _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) | O_NONBLOCK)
        logger = Logger(environment: [:], descriptor: writeEnd)
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Everything logged since the last call.
    func drain() -> String {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(readEnd, &buffer, buffer.count)
            guard count > 0 else { break }
            result += buffer[0..<count]
        }
        return String(decoding: result, as: UTF8.self)
    }
}
