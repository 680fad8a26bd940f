// Socket constants (SOCK_STREAM, MSG_NOSIGNAL …) through the libevent
// module, whose shim includes the libc socket headers first: which C module
// owns those declarations depends on how a build batches its files, and
// through Foundation alone they were missing in some builds.
internal import CLibevent
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's diagnostic log: one line per message on stderr, `subsystem: message`.
///
/// Why a hand-rolled logger: Swift 6 rejects the C global `stderr`, and a
/// daemon under systemd wants the journal's `<N>` priority prefix
/// (sd-daemon(3), "SD_ERR" …) without linking libsystemd. Each message becomes
/// exactly one `write(2)` (or `send(2)` when stderr is a socket) so lines from
/// several threads never interleave, and so the journal sees one record per line.
///
/// Invariants: `log` never blocks on a lock held across anything but that one
/// system call, never raises SIGPIPE (sockets are written with `MSG_NOSIGNAL`;
/// for pipes the daemon ignores SIGPIPE), and never crashes on `EPIPE`/`EAGAIN`:
/// a line that cannot be written is dropped, because stderr is the last resort.
/// Violation events are *not* log lines; they go to `ViolationLogFile`.
public final class Logger: @unchecked Sendable {
    /// Severity of a message, ordered from most to least severe.
    public enum Level: String, Sendable, CaseIterable, Comparable {
        case error, warning, info, debug

        /// The syslog priority the journal reads from a `<N>` prefix (RFC 5424 §6.2.1).
        public var syslogPriority: Int {
            switch self {
            case .error: 3
            case .warning: 4
            case .info: 6
            case .debug: 7
            }
        }

        /// `error < warning < info < debug`: a smaller level is more severe.
        public static func < (lhs: Level, rhs: Level) -> Bool {
            lhs.syslogPriority < rhs.syslogPriority
        }
    }

    /// The process-wide logger on file descriptor 2, configured from the process environment.
    public static let shared = Logger(environment: ProcessInfo.processInfo.environment)

    /// Guards `threshold` and serialises writes so that a partially written long line is
    /// finished before another thread's line starts (lines are formatted outside it).
    private let lock = NSLock()
    private var threshold: Level = .info
    private let descriptor: Int32
    private let isSocket: Bool

    /// Whether every line starts with `<N>`: true when systemd started us
    /// (`JOURNAL_STREAM` or `INVOCATION_ID` is set), so the journal gets the priority.
    public let usesPriorityPrefix: Bool

    /// Creates a logger writing to `descriptor` (stderr unless a test passes a pipe or socket).
    /// `descriptor` 2 is standard error (STDERR_FILENO, not nameable in a public default argument here).
    public init(environment: [String: String], descriptor: Int32 = 2) {
        self.descriptor = descriptor
        self.usesPriorityPrefix = environment["JOURNAL_STREAM"] != nil || environment["INVOCATION_ID"] != nil
        var info = stat()
        self.isSocket = fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
    }

    /// Messages less severe than this are discarded (`--log-level`); default `.info`.
    public var minimumLevel: Level {
        get { lock.withLock { threshold } }
        set { lock.withLock { threshold = newValue } }
    }

    /// Writes `subsystem: message` as one line when `level` passes `minimumLevel`.
    /// The message is built only then: every closed connection logs at debug,
    /// and formatting its peer address and reason cost a tenth of a
    /// `Connection: close` request's instructions when nobody reads debug.
    public func log(_ level: Level, _ subsystem: String, _ message: @autoclosure () -> String) {
        guard level <= minimumLevel else { return }
        let line = Self.formattedLine(level, subsystem, message(), priorityPrefix: usesPriorityPrefix)
        lock.withLock { writeWhole(line) }
    }

    /// The exact bytes of one log line. Embedded CR/LF are escaped as `\r`/`\n`
    /// so that one message can never forge a second journal record.
    static func formattedLine(_ level: Level, _ subsystem: String, _ message: String, priorityPrefix: Bool) -> [UInt8] {
        var text = priorityPrefix ? "<\(level.syslogPriority)>" : ""
        text += subsystem + ": " + message
        text = text.replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\\n")
        return Array((text + "\n").utf8)
    }

    /// One system call for the line; only a short write (a line longer than the
    /// pipe buffer) or `EINTR` leads to a second one. Any other failure drops the line.
    private func writeWhole(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                let result = isSocket
                    ? send(descriptor, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                    : write(descriptor, base + offset, raw.count - offset)
                if result > 0 {
                    offset += result
                } else if result < 0 && errno == EINTR {
                    continue
                } else {
                    return  // EPIPE, EAGAIN, EBADF…: nowhere left to report it.
                }
            }
        }
    }
}
