internal import CLibevent
import Foundation

/// Socket options pinproxy sets, in one place.
enum SocketOptions {
    /// Heads and small bodies go out at once instead of waiting for Nagle's
    /// algorithm to coalesce them (a request-response proxy never benefits).
    static func disableNagle(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }
}
