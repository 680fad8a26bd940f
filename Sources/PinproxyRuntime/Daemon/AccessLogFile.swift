import Foundation
import Synchronization

/// `access_log` (SPEC §6): lines appended by a writer thread of its own, in
/// groups, with no `fdatasync` — unlike the violation log, this is a traffic
/// record, not an audit trail: a line may be lost in a crash, and when the
/// queue is full (the disk is slower than the traffic) lines are dropped and
/// counted, never waited for. Rotation as the violation log: a rename is
/// noticed before each group, SIGUSR1/SIGHUP reopen.
public final class AccessLogFile: @unchecked Sendable {
    public let path: String
    private let logger: Logger
    private let maxQueuedLines: Int
    private let condition = NSCondition()
    private var queue: [[UInt8]] = []
    private var isReopenRequested = false
    private var isStopRequested = false
    private var isFinished = false
    private var reportedFailure = false
    /// Lines dropped because the queue was full or a write failed.
    public let droppedLines = Atomic<Int>(0)
    // Writer-thread state.
    private let file: AppendOnlyLog

    public init(path: String, logger: Logger, maxQueuedLines: Int = 100_000) throws {
        self.path = path
        self.logger = logger
        self.maxQueuedLines = max(1, maxQueuedLines)
        file = AppendOnlyLog(path: path)
        if let error = file.open() { throw error }
        Thread.startNamed("access-log") { [self] in runWriter() }
    }

    /// Queues one line (ending in "\n"); never blocks on disk.
    public func append(_ line: [UInt8]) {
        condition.lock()
        guard !isStopRequested, queue.count < maxQueuedLines else {
            condition.unlock()
            droppedLines.add(1, ordering: .relaxed)
            return
        }
        queue.append(line)
        if queue.count == 1 { condition.signal() }
        condition.unlock()
    }

    public func reopen() {
        condition.withLock {
            isReopenRequested = true
            condition.signal()
        }
    }

    /// Writes what is queued, then stops the writer (bounded: a stuck disk does not hold up shutdown).
    public func close() {
        condition.lock()
        isStopRequested = true
        condition.signal()
        let deadline = Date().addingTimeInterval(2)
        while !isFinished && condition.wait(until: deadline) {}
        condition.unlock()
    }

    private func runWriter() {
        while true {
            condition.lock()
            while queue.isEmpty && !isReopenRequested && !isStopRequested { condition.wait() }
            let batch = queue
            queue.removeAll(keepingCapacity: true)
            let reopen = isReopenRequested
            isReopenRequested = false
            let stop = isStopRequested
            condition.unlock()
            write(batch, reopenFirst: reopen)
            if stop {
                file.close()
                condition.withLock {
                    isFinished = true
                    condition.broadcast()
                }
                return
            }
        }
    }

    private func write(_ batch: [[UInt8]], reopenFirst: Bool) {
        var error: ViolationLogError?
        if reopenFirst || file.isRotated() { error = file.open() }
        if error == nil, !batch.isEmpty {
            // One write(2) for the group: an access log keeps up with traffic.
            var joined: [UInt8] = []
            joined.reserveCapacity(batch.reduce(0) { $0 + $1.count })
            for line in batch { joined += line }
            error = file.append(joined, from: 0).error
        }
        if error != nil { droppedLines.add(batch.count, ordering: .relaxed) }
        // One line per change of state, not one per failed group.
        if let error, !reportedFailure {
            logger.log(.error, "access-log", "\(error); access log lines are dropped until it can be written")
        } else if error == nil, reportedFailure {
            logger.log(.info, "access-log", "writing to \(path) again")
        }
        reportedFailure = error != nil
    }
}
