import Foundation

/// Values gathered from several threads (a load tool's result), read
/// once the threads are done.
final class CollectedValues<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Value] = []

    func append(_ value: Value) { lock.withLock { values.append(value) } }
    var all: [Value] { lock.withLock { values } }
}
