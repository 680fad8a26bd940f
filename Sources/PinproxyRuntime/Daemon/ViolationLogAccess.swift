import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What `pinproxy check` finds about the violation log, by the system calls
/// `run` makes, without writing a byte to the log (SPEC §1: `check` fails
/// where `run` would fail).
///
/// - An existing log is opened as `AppendOnlyLog` opens it (`O_RDWR|O_APPEND`,
///   no `O_TRUNC`) and closed again.
/// - The directory must let a file be created in it: `run` creates the log
///   when it is absent, and again after every rotation by rename. Whether it
///   can is asked by creating and removing an empty file of another name
///   there. Why not `access(2)`: it answers for the real uid, ignores
///   immutable directories and lies on pseudo file systems (`/sys` says
///   writable, then refuses the `open`); only the `open` itself tells what
///   `run` will meet. The log's own path is never created, so a daemon that is
///   running on it never sees a file appear and vanish.
public enum ViolationLogAccess {
    public struct Findings: Sendable, Equatable {
        /// What makes `run` exit 3 at start: the same message it prints.
        public var error: ViolationLogError?
        /// A log that opens now but could not be recreated after a rotation.
        public var warning: String?
    }

    public static func check(path: String) -> Findings {
        var info = stat()
        let exists = stat(path, &info) == 0
        if exists {
            let descriptor = open(path, O_RDWR | O_APPEND | O_CLOEXEC)
            guard descriptor >= 0 else {
                return Findings(error: ViolationLogError(path: path, operation: "open", code: errno))
            }
            close(descriptor)
        }
        let directory = (path as NSString).deletingLastPathComponent
        let probe = (directory.isEmpty ? "." : directory) + "/.pinproxy-check-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            // Absent, the log is created by this same open at start: its failure is run's.
            guard exists else { return Findings(error: ViolationLogError(path: path, operation: "open", code: code)) }
            return Findings(warning: "violation log \(path): cannot create a file in \(directory.isEmpty ? "." : directory) "
                + "(\(String(cString: strerror(code)))): after a rotation by rename the log cannot be recreated "
                + "and events go to stderr only; give the pinproxy user write access to that directory")
        }
        close(descriptor)
        unlink(probe)
        return Findings()
    }
}
