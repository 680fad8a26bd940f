/// Carries a value that is only ever touched on one event loop's thread
/// across an API that demands `Sendable` (a completion that hops back to that
/// loop with `EventLoop.execute`). The invariant is the caller's: unwrap it
/// only on the loop it came from.
struct LoopBound<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A weak reference as a value, for `LoopBound(Weak(self))` in completions
/// that must not keep their target alive.
struct Weak<Object: AnyObject> {
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}
