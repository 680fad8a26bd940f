import Foundation

/// A thread-safe in-memory `ViolationSink` for tests: keeps every event in the
/// order `record` was called, so a test can assert on the whole sequence.
public final class RecordingViolationSink: ViolationSink, @unchecked Sendable {
    // @unchecked: `storage` is only read or written while holding `lock`.
    private let lock = NSLock()
    private var storage: [ViolationEvent] = []

    public init() {}

    public func record(_ event: ViolationEvent) {
        lock.withLock { storage.append(event) }
    }

    /// A snapshot of the events recorded so far, oldest first.
    public var events: [ViolationEvent] {
        lock.withLock { storage }
    }
}
