import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A failure of the violation log machinery, naming the path, the operation and
/// the `errno` text, so that the message alone tells the operator what to fix
/// (`pinproxy run` exits with code 3 when the log cannot be opened at start).
public struct ViolationLogError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The log file path as configured (`violation_log`).
    public let path: String
    /// What was attempted: `open`, `write`, `fdatasync`, `stat`.
    public let operation: String
    /// The `errno` the system call failed with.
    public let code: Int32

    public init(path: String, operation: String, code: Int32) {
        self.path = path
        self.operation = operation
        self.code = code
    }

    public var description: String {
        "cannot \(operation) violation log \(path): \(String(cString: strerror(code))) (errno \(code))"
    }
}
