import Foundation

/// Checks one harness invariant and turns a violation into a crash that
/// libFuzzer records (it saves the input as `crash-<sha1>`).
///
/// `precondition` would do in debug builds, but the harnesses are built with
/// `-c release`, where its message is dropped; an invariant failure must say
/// which invariant broke and on what, so the message goes to stderr first.
public enum Invariant {
    public static func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                             file: StaticString = #fileID, line: UInt = #line) {
        guard !condition() else { return }
        FileHandle.standardError.write(Data("invariant failed at \(file):\(line): \(message())\n".utf8))
        abort()
    }
}
