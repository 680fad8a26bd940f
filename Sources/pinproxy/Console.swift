import Foundation

/// Standard output and error for the subcommands, written with `write(2)`:
/// unbuffered, so `tail -f` lines reach a pipe at once, and usable where
/// Swift 6 refuses the C `stdout`/`stderr` globals.
enum Console {
    /// Writes `text` and a newline to standard output.
    static func print(_ text: String) { write(text + "\n", to: STDOUT_FILENO) }

    /// Writes `text` and a newline to standard error.
    static func error(_ text: String) { write(text + "\n", to: STDERR_FILENO) }

    /// Whether standard output is a terminal (colour only then).
    static var isTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }
}
