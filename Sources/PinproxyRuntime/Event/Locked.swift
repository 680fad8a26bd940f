import Foundation

/// A value behind an `NSLock`, for state that threads share.
///
/// Why not `Synchronization.Mutex`: the standard library is not built with
/// ThreadSanitizer, so the ordering its atomics give is invisible to the
/// sanitizer pass of `make test`, which then reports every `Mutex`-guarded
/// access made from two threads as a race. `NSLock` is a pthread mutex,
/// which the sanitizer understands. (Hence `Logger`'s `NSLock` too.)
/// `SanitizerVisibleLockTests` fails on any `Mutex` in Sources or Tests.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
