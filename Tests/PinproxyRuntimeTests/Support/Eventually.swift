import Foundation

/// Polls `probe` every `interval` until `isDone` holds for its value or
/// `timeout` passes, and returns the last value, so that a test that fails
/// can say what it saw.
///
/// For state no callback announces: a file another process writes, `/proc`,
/// the socket table, a peer's log. Where a callback exists (a process's
/// termination, `DurabilityRecorder`), wait on it instead. Every wait in the
/// tests is bounded, so a hang is a failure with a message, not a stuck run.
func eventually<Value>(timeout: TimeInterval = 10, interval: TimeInterval = 0.02,
                       _ probe: () throws -> Value, until isDone: (Value) -> Bool) rethrows -> Value {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        let value = try probe()
        let left = deadline.timeIntervalSinceNow
        if isDone(value) || left <= 0 { return value }
        usleep(useconds_t(min(interval, left) * 1_000_000))
    }
}

/// Polls `condition` every `interval` until it holds or `timeout` passes;
/// whether it held in the end.
func eventually(timeout: TimeInterval = 10, interval: TimeInterval = 0.02, _ condition: () throws -> Bool) rethrows -> Bool {
    try eventually(timeout: timeout, interval: interval, condition, until: { $0 })
}
