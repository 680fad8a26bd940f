import Foundation

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
