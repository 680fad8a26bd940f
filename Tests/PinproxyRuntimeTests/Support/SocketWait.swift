import Foundation

/// Waiting on a test's own socket without mistaking a signal for an answer.
///
/// The runner's other threads spawn processes all along, and poll(2) is never
/// restarted after a signal handler (signal(7)): an interrupted wait returns
/// EINTR with time left. These go on for what is left of the timeout, and
/// recv(2) is asked again when a signal came before any byte did.
enum SocketWait {
    /// True when a read on `descriptor` would not block within `timeout`
    /// (data, end of stream or an error).
    static func readable(_ descriptor: Int32, within timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let left = max(0, deadline.timeIntervalSinceNow)
            let ready = poll(&entry, 1, Int32((left * 1000).rounded(.up)))
            if ready >= 0 || errno != EINTR { return ready > 0 }
        }
    }

    /// recv(2) of up to `count` bytes into `buffer`; its result, errno kept.
    static func receive(_ descriptor: Int32, into buffer: inout [UInt8], atMost count: Int) -> Int {
        while true {
            let received = recv(descriptor, &buffer, count, 0)
            if received >= 0 || errno != EINTR { return received }
        }
    }
}
