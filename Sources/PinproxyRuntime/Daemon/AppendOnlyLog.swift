import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The open descriptor of the violation log and the system calls on it: open
/// (create 0640, heal a torn last line, make a new entry durable), rotation
/// detection, appending and `fdatasync`.
///
/// Why separate from `ViolationLogFile`: this is the part that touches the
/// disk; the queue, the thread and the completions live there. Used only from
/// the writer thread (and from `ViolationLogFile.init` before it starts).
///
/// Invariants: `descriptor` is -1 or an `O_APPEND|O_CLOEXEC` descriptor whose
/// file ended with "\n" when it was opened; every failure is returned as a
/// `ViolationLogError` value naming the path, never thrown past the thread.
final class AppendOnlyLog {
    let path: String
    private(set) var descriptor: Int32 = -1

    init(path: String) {
        self.path = path
    }

    deinit {
        close()
    }

    var isOpen: Bool { descriptor >= 0 }

    /// Opens the path, creating it with mode 0640 when absent.
    ///
    /// A created file's directory entry is made durable by fsyncing the parent
    /// directory (a crash must not lose the file that holds durable lines). An
    /// existing file whose last byte is not "\n" (a line torn by a crash) gets
    /// a "\n" first, so the next line starts on a line of its own.
    func open() -> ViolationLogError? {
        close()
        var created = true
        var fd = Glibc.open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_CREAT | O_EXCL, 0o640)
        if fd < 0 && errno == EEXIST {
            created = false
            fd = Glibc.open(path, O_RDWR | O_APPEND | O_CLOEXEC)
        }
        guard fd >= 0 else { return failure("open") }
        if created {
            syncParentDirectory()
        } else if let error = healTornLine(fd) {
            Glibc.close(fd)
            return error
        }
        descriptor = fd
        return nil
    }

    /// True when the path no longer names the open file (renamed away or
    /// deleted by a rotation): then the writer must reopen before appending.
    func isRotated() -> Bool {
        guard descriptor >= 0 else { return true }
        var onPath = stat()
        var open = stat()
        guard stat(path, &onPath) == 0 else { return true }
        guard fstat(descriptor, &open) == 0 else { return true }
        return onPath.st_dev != open.st_dev || onPath.st_ino != open.st_ino
    }

    /// Appends `bytes[offset...]` with as few `write(2)` calls as the kernel
    /// allows (one, normally). Returns the new offset; on error, the offset
    /// reached so far and the error, so a retry completes the line instead of
    /// writing it twice.
    func append(_ bytes: [UInt8], from offset: Int) -> (offset: Int, error: ViolationLogError?) {
        var position = offset
        while position < bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                write(descriptor, raw.baseAddress! + position, raw.count - position)
            }
            if result > 0 {
                position += result
            } else if result < 0 && errno == EINTR {
                continue
            } else {
                // write(2) returning 0 for a non-empty buffer is treated as no space.
                return (position, result == 0 ? ViolationLogError(path: path, operation: "write", code: ENOSPC) : failure("write"))
            }
        }
        return (position, nil)
    }

    /// Makes everything appended so far durable (data and the size, which is what
    /// `fdatasync` covers for an appended file).
    func sync() -> ViolationLogError? {
        while fdatasync(descriptor) != 0 {
            if errno != EINTR { return failure("fdatasync") }
        }
        return nil
    }

    func close() {
        if descriptor >= 0 {
            Glibc.close(descriptor)
            descriptor = -1
        }
    }

    private func healTornLine(_ fd: Int32) -> ViolationLogError? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return failure("stat") }
        guard info.st_size > 0 else { return nil }
        var last: UInt8 = 0
        guard pread(fd, &last, 1, info.st_size - 1) == 1 else { return failure("read") }
        guard last != UInt8(ascii: "\n") else { return nil }
        var newline = UInt8(ascii: "\n")
        guard write(fd, &newline, 1) == 1 else { return failure("write") }
        return nil
    }

    private func syncParentDirectory() {
        let parent = (path as NSString).deletingLastPathComponent
        let directory = Glibc.open(parent.isEmpty ? "." : parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return }
        _ = fsync(directory)
        Glibc.close(directory)
    }

    private func failure(_ operation: String) -> ViolationLogError {
        ViolationLogError(path: path, operation: operation, code: errno)
    }
}
