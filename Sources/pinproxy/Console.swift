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
        // The string's own UTF-8, not a copy: `check` of 100,000 rules prints megabytes.
        var text = text
        text.withUTF8 { utf8 in
            var offset = 0
            while offset < utf8.count {
                let written = Glibc.write(descriptor, utf8.baseAddress! + offset, utf8.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
