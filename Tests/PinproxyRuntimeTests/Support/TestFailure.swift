/// A test's own scaffolding failed (a peer did not start, a tool timed out):
/// thrown, so the test stops there and its message says what was missing.
struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
