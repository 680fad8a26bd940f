internal import COpenSSL

/// A failed OpenSSL call, with the thread's error queue drained into words.
///
/// Built right after the failing call (`ERR_clear_error()` goes before it), so
/// `messages` holds exactly what that call reported. `operation` names the
/// call and its input (a file path, a cipher list) so the message is actionable.
struct OpenSSLError: Error, CustomStringConvertible {
    /// What was being done, e.g. `load certificate /etc/pinproxy/certs/cdn.pem`.
    let operation: String
    /// OpenSSL's own error strings, oldest first; empty when the call failed without queuing any.
    let messages: [String]

    /// Empties the calling thread's OpenSSL error queue into a new error.
    static func drain(_ operation: String) -> OpenSSLError {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return OpenSSLError(operation: operation, messages: messages)
    }

    /// The calling thread's queued errors in OpenSSL's words (the queue is
    /// emptied), or `fallback` when the failure queued none (a reset).
    static func describeQueue(fallback: String) -> String {
        let messages = drain("").messages
        return messages.isEmpty ? fallback : messages.joined(separator: "; ")
    }

    var description: String {
        messages.isEmpty ? "\(operation): failed" : "\(operation): \(messages.joined(separator: "; "))"
    }
}
