import Foundation

/// Failures of the machine (not of a peer): a system call, a library call.
/// Each names the operation and the input so the message tells what to fix.
enum RuntimeError: Error, CustomStringConvertible {
    case system(String, Int32)
    case bind(String, Int32)
    case message(String)

    var description: String {
        switch self {
        case let .system(operation, code):
            return "\(operation) failed: \(String(cString: strerror(code)))"
        case let .bind(address, code):
            return "cannot listen on \(address): \(String(cString: strerror(code)))"
        case let .message(text):
            return text
        }
    }
}
