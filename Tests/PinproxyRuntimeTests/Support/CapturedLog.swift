import Foundation
@testable import PinproxyRuntime
#if canImport(Glibc)
import Glibc
#endif

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
