import Foundation
@testable import PinproxyRuntime
#if canImport(Glibc)
import Glibc
#endif

/// A logger whose lines go to a socket pair, so tests keep stderr clean and can read them.
final class CapturedLog: @unchecked Sendable {
    let logger: Logger
    private let readEnd: Int32
    /// The descriptor number the logger writes to (see `deinit`).
    let writeEnd: Int32

    init() {
        var ends: [Int32] = [0, 0]
        socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends)
        readEnd = ends[0]
        writeEnd = ends[1]
        _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) | O_NONBLOCK)
        logger = Logger(environment: [:], descriptor: writeEnd)
    }

    /// The write end's number stays taken, on /dev/null from now on. A
    /// `Logger` holds only the number and may outlive this capture (a bed's
    /// daemon still logging its shutdown after the bed's capture went, a
    /// `ViolationLogFile` given `CapturedLog().logger`). Closed, the number
    /// would be handed to the next socket any test opens, and those late
    /// lines would be written into that connection: a client then reads a
    /// log line where its answer should be. `dup2` swaps the file under the
    /// number in one step, so no write can find it free.
    deinit {
        let discard = open("/dev/null", O_WRONLY | O_CLOEXEC)
        if discard >= 0 {
            dup2(discard, writeEnd)
            close(discard)
        }
        close(readEnd)
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
