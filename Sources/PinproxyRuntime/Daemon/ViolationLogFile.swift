import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The durable JSON Lines writer of the violation log (SPEC §4).
///
/// Why a thread of its own: every event must be `fdatasync`ed before the
/// client gets its 502, and the event loop must never block on disk. `append`
/// only enqueues; a dedicated writer thread does group commit — it takes every
/// queued line, writes each with one `write(2)` on the `O_APPEND` descriptor,
/// then makes the whole group durable with one `fdatasync`.
///
/// Invariants:
/// - a line accepted into the queue is written exactly once, in order: it stays
///   queued until written, and a short write is completed from its offset,
///   never rewritten;
/// - `whenDurable` is called exactly once per line: `true` after the
///   `fdatasync` covering it returned, `false` when it could not be written
///   right now (the line then stays queued, is retried every second, and is
///   copied to stderr once so it is never only in memory);
/// - completions run on the writer thread, except for lines refused outright
///   (queue overflow, after `close`), whose `false` is delivered on the caller's thread;
/// - the queue holds at most `maxQueuedLines`; overflow is counted in
///   `droppedLines` and each dropped line goes to stderr.
///
/// The writer thread holds a strong reference until `close()`: call it.
public final class ViolationLogFile: @unchecked Sendable {
    /// One accepted line and its not-yet-delivered completion.
    private struct PendingLine {
        let bytes: [UInt8]
        var whenDurable: (@Sendable (Bool) -> Void)?
        var isOnStderr = false
    }

    public let path: String
    private let logger: Logger
    private let maxQueuedLines: Int
    /// How long the writer waits before retrying after a failure.
    private let retryInterval: TimeInterval = 1

    /// Guards every `var` below; the writer thread waits on it for work.
    private let condition = NSCondition()
    private var queue: [PendingLine] = []
    /// Lines the writer has taken out of `queue` for the group in progress; they
    /// count against `maxQueuedLines` too.
    private var inFlight = 0
    private var dropped = 0
    private var isReopenRequested = false
    private var isStopRequested = false
    private var stopDeadline = Date.distantFuture
    private var isFinished = false

    // Writer-thread state (no lock: touched only by the writer after `init`).
    private let file: AppendOnlyLog
    /// Bytes of the head of `queue` already written to `file`.
    private var headOffset = 0
    /// Lines written but not yet covered by a successful `fdatasync`.
    private var unsynced: [PendingLine] = []
    /// The failure being reported, so that stderr gets one line per change, not one per retry.
    private var currentError: ViolationLogError?

    /// Opens (or creates) the log and starts the writer thread.
    ///
    /// - Throws: `ViolationLogError` when the file cannot be opened now; the
    ///   daemon exits with code 3 rather than start without its audit trail.
    public init(path: String, logger: Logger, maxQueuedLines: Int = 10_000) throws {
        self.path = path
        self.logger = logger
        self.maxQueuedLines = max(1, maxQueuedLines)
        self.file = AppendOnlyLog(path: path)
        if let error = file.open() { throw error }
        Thread.startNamed("violation-log") { [self] in runWriter() }
    }

    /// Enqueues one serialised event (ending in "\n"); never blocks on disk.
    public func append(_ line: [UInt8], whenDurable: @escaping @Sendable (Bool) -> Void) {
        condition.lock()
        guard !isStopRequested, queue.count + inFlight < maxQueuedLines else {
            let reason = isStopRequested ? "the log is closed" : "the queue is full (\(maxQueuedLines) lines)"
            if !isStopRequested { dropped += 1 }
            condition.unlock()
            logger.log(.error, "violation-log", "dropped an event because \(reason); event follows: \(Self.text(line))")
            whenDurable(false)
            return
        }
        queue.append(PendingLine(bytes: line, whenDurable: whenDurable))
        condition.signal()
        condition.unlock()
    }

    /// Closes and reopens the path on the writer thread (SIGUSR1, SIGHUP, logrotate).
    public func reopen() {
        condition.withLock {
            isReopenRequested = true
            condition.signal()
        }
    }

    /// Flushes what can be flushed within about two seconds, then stops the
    /// writer; lines still queued get `whenDurable(false)` and are on stderr.
    public func close() {
        condition.lock()
        defer { condition.unlock() }
        if !isStopRequested {
            isStopRequested = true
            stopDeadline = Date().addingTimeInterval(2)
            condition.broadcast()
        }
        // Bounded: a writer stuck in a hung fdatasync must not hold up shutdown.
        while !isFinished && condition.wait(until: stopDeadline.addingTimeInterval(0.5)) {}
    }

    /// Lines refused because the queue was full.
    public var droppedLines: Int {
        condition.withLock { dropped }
    }

    /// Lines accepted and not yet durable (SPEC §6).
    public var queuedLines: Int {
        condition.withLock { queue.count + inFlight }
    }

    /// Write or sync attempts that failed (each retry counts).
    public var writeErrors: UInt64 { failedAttempts.load(ordering: .relaxed) }
    private let failedAttempts = Atomic<UInt64>(0)

    // MARK: - Writer thread

    /// What the writer does next, decided under the lock.
    private enum Step {
        case write(reopen: Bool)
        case report
        case wait(until: Date?)
        case finish
    }

    private func runWriter() {
        var retryAt: Date?
        condition.lock()
        loop: while true {
            switch nextStep(retryAt: retryAt) {
            case .wait(let until):
                if let until { _ = condition.wait(until: until) } else { condition.wait() }
            case .report:
                var unreported: [PendingLine] = []
                for index in queue.indices where !queue[index].isOnStderr {
                    unreported.append(queue[index])
                    queue[index].isOnStderr = true
                    queue[index].whenDurable = nil
                }
                condition.unlock()
                for var line in unreported { reportNotDurable(&line, "kept queued") }
                condition.lock()
            case .write(let reopen):
                let batch = queue
                queue = []
                inFlight = batch.count
                isReopenRequested = false
                condition.unlock()
                let (rest, error) = writeGroup(batch, reopenFirst: reopen)
                condition.lock()
                queue = rest + queue
                inFlight = 0
                retryAt = error == nil ? nil : Date().addingTimeInterval(retryInterval)
            case .finish:
                break loop
            }
        }
        let abandoned = queue
        queue = []
        condition.unlock()
        if !unsynced.isEmpty, file.isOpen { _ = file.sync() }
        file.close()
        for var line in abandoned { reportNotDurable(&line, "not written at shutdown") }
        condition.withLock {
            isFinished = true
            condition.broadcast()
        }
    }

    /// The writer's schedule (lock held): reopen and new lines go at once; while
    /// failing, new lines are reported and the group waits for the retry time;
    /// on stop, flush until empty or until the deadline.
    private func nextStep(retryAt: Date?) -> Step {
        let now = Date()
        if isStopRequested && ((queue.isEmpty && unsynced.isEmpty) || now >= stopDeadline) { return .finish }
        if retryAt != nil && queue.contains(where: { !$0.isOnStderr }) { return .report }
        if isReopenRequested { return .write(reopen: true) }
        if let retryAt {
            if now >= retryAt { return .write(reopen: false) }
            return .wait(until: isStopRequested ? min(retryAt, stopDeadline) : retryAt)
        }
        if !queue.isEmpty { return .write(reopen: false) }
        return .wait(until: nil)
    }

    /// Writes one group and syncs it; returns the lines not written yet and the failure.
    /// Runs without the lock; completions are delivered here, on the writer thread.
    private func writeGroup(_ batch: [PendingLine], reopenFirst: Bool) -> ([PendingLine], ViolationLogError?) {
        var lines = batch[...]
        var error: ViolationLogError?
        // A line cut short by an earlier failure is completed on the file it started in.
        if headOffset > 0, let head = lines.first, file.isOpen {
            let result = file.append(head.bytes, from: headOffset)
            headOffset = result.offset
            if result.error == nil {
                headOffset = 0
                unsynced.append(head)
                lines = lines.dropFirst()
            }
        }
        if reopenFirst || file.isRotated() {
            // What was written to the old file is made durable there if possible; a
            // fragment stays behind (healed when that file is opened again) and the
            // whole line goes to the new file.
            syncUnsynced()
            unsynced = []
            headOffset = 0
            error = file.open()
        }
        if error == nil {
            while let line = lines.first {
                let result = file.append(line.bytes, from: headOffset)
                headOffset = result.offset
                if let failure = result.error {
                    error = failure
                    break
                }
                headOffset = 0
                unsynced.append(line)
                lines = lines.dropFirst()
            }
        }
        if let failure = syncUnsynced() { error = error ?? failure }
        noteOutcome(error)
        return (Array(lines), error)
    }

    /// One `fdatasync` for every written line; `true` to each on success. On
    /// failure they get `false` and a stderr copy, and stay to be synced again
    /// (never rewritten: they are in the file already).
    @discardableResult
    private func syncUnsynced() -> ViolationLogError? {
        guard !unsynced.isEmpty, file.isOpen else { return nil }
        if let failure = file.sync() {
            for index in unsynced.indices { reportNotDurable(&unsynced[index], "written but not durable") }
            return failure
        }
        for index in unsynced.indices { deliver(&unsynced[index], true) }
        unsynced = []
        return nil
    }

    /// The stderr copy (once per line) and `whenDurable(false)` (once per line).
    private func reportNotDurable(_ line: inout PendingLine, _ state: String) {
        if !line.isOnStderr {
            logger.log(.error, "violation-log", "event \(state) (\(path)): \(Self.text(line.bytes))")
            line.isOnStderr = true
        }
        deliver(&line, false)
    }

    private func deliver(_ line: inout PendingLine, _ isDurable: Bool) {
        line.whenDurable?(isDurable)
        line.whenDurable = nil
    }

    /// Logs a failure when it starts or changes, and the recovery once.
    private func noteOutcome(_ error: ViolationLogError?) {
        if error != nil { failedAttempts.add(1, ordering: .relaxed) }
        if let error, error != currentError {
            logger.log(.error, "violation-log", "\(error); events stay queued and are retried every second")
        } else if error == nil, currentError != nil {
            logger.log(.info, "violation-log", "writing to \(path) again")
        }
        currentError = error
    }

    private static func text(_ line: [UInt8]) -> String {
        var bytes = line
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
