import Foundation
import PinproxyCore

/// Follows a violation log like `tail -F` (SPEC §4): polls every 200 ms,
/// notices rotation (the path names another inode) and truncation (the file
/// is shorter than what was read), and hands out every complete line exactly
/// once.
///
/// On rotation the old descriptor is read to its end *before* the new file
/// is read, and kept open for a few more polls (`drainPolls`), because the
/// daemon may append one last line to the renamed file before it notices the
/// rename and reopens (SPEC §4). Owns its descriptors and closes them in `deinit`.
final class LogFollower {
    /// One open generation of the log: its descriptor, where it was opened,
    /// and its own partial-line state.
    private final class OpenFile {
        let descriptor: Int32
        let device: UInt
        let inode: UInt
        var offset: Int = 0
        var reader = ViolationLogReader()
        var pollsLeft = LogFollower.drainPolls

        init?(path: String) {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            var info = stat()
            guard fstat(fd, &info) == 0 else { close(fd); return nil }
            descriptor = fd
            device = UInt(info.st_dev)
            inode = UInt(info.st_ino)
        }

        deinit { close(descriptor) }

        /// Every complete line between the last read and the end of the file.
        func readToEnd() -> [ViolationLogReader.Line] {
            var lines: [ViolationLogReader.Line] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                offset += count
                lines += reader.consume(buffer[..<count])
            }
            return lines
        }
    }

    /// The poll interval of `-f`.
    static let interval: Duration = .milliseconds(200)
    /// How many polls a rotated-away file is still read after the switch (1 s).
    static let drainPolls = 5

    let path: String
    private var current: OpenFile
    private var retired: [OpenFile] = []

    /// Opens `path`; nil (with `errno` set) when it cannot be opened.
    init?(path: String) {
        guard let file = OpenFile(path: path) else { return nil }
        self.path = path
        current = file
    }

    /// Lines already in the file (the first read).
    func initialLines() -> [ViolationLogReader.Line] { current.readToEnd() }

    /// One poll: late lines of rotated-away files, new lines of the current
    /// file, and, after a rotation or truncation, the new file's lines from its start.
    func poll() -> [ViolationLogReader.Line] {
        var lines: [ViolationLogReader.Line] = []
        for file in retired {
            lines += file.readToEnd()
            file.pollsLeft -= 1
            if file.pollsLeft <= 0 { lines += file.reader.finishFile() }
        }
        retired.removeAll { $0.pollsLeft <= 0 }
        lines += current.readToEnd()
        var info = stat()
        guard stat(path, &info) == 0 else { return lines }  // mid-rotation: the new file is not there yet
        if UInt(info.st_ino) != current.inode || UInt(info.st_dev) != current.device {
            // Rotation by rename: the old file was just read to its end; switch.
            guard let next = OpenFile(path: path) else { return lines }
            retired.append(current)
            current = next
            lines += current.readToEnd()
        } else if Int(info.st_size) < current.offset {
            // Truncated in place (copytruncate): start again from the beginning.
            _ = current.reader.finishFile()
            lseek(current.descriptor, 0, SEEK_SET)
            current.offset = 0
            lines += current.readToEnd()
        }
        return lines
    }
}
