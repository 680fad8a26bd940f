import Foundation
import PinproxyCore

/// The learned-pins file on disk (SPEC §2.1; `StateDirectory=`, §5), kept as
/// ssh keeps `known_hosts` under `StrictModes`: whoever can change it chooses
/// which servers pinned traffic goes to.
///
/// - Reading refuses a file that group or other can write or that another user
///   owns, and a directory that others can write without the sticky bit
///   (they could rename another file over it), naming the `chmod` that fixes it.
///   The file is opened with `O_NOFOLLOW` and checked on the open descriptor, so
///   what is checked is what is read. A missing file is an empty one.
/// - Writing is atomic and durable: a new temporary file beside it, mode 0600
///   from the first instant, `fsync`, `rename` over the file, `fsync` of the
///   directory. A crash leaves the old file or the new one, never a mix.
public struct LearnedPinFile: Sendable {
    /// An absolute path, so every message says which file is meant.
    public let path: String
    /// Larger than any file a configuration's rules can produce.
    static let maximumBytes = 16 << 20

    public init(path: String) {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        // Only `.` components go (`./learned-pins.json`): nothing that resolves
        // a symbolic link, which must reach `open` to be refused there.
        self.path = "/" + absolute.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
    }

    var directory: String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "/" : parent
    }

    /// The users whose file pinproxy believes: itself and root (as ssh), and,
    /// when it runs as root (an operator's `check` or `pins --learned`), the
    /// directory's owner: the service's `DynamicUser`, who can replace the file anyway.
    private func trustedOwners(directoryOwner: uid_t?) -> Set<uid_t> {
        var owners: Set<uid_t> = [geteuid(), 0]
        if geteuid() == 0, let directoryOwner { owners.insert(directoryOwner) }
        return owners
    }

    /// The document in the file; empty when there is no file yet.
    public func read() throws(LearnedPinFileError) -> LearnedPinsDocument {
        let directoryOwner = try checkDirectory()
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return LearnedPinsDocument() }
            if errno == ELOOP { throw .io(path, "is a symbolic link; the learned pins must be a regular file") }
            throw .io(path, "cannot be opened: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .io(path, "cannot be examined: \(String(cString: strerror(errno)))") }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .io(path, "is not a regular file") }
        try checkOwner(status.st_uid, of: path, directoryOwner: directoryOwner)
        if status.st_mode & 0o022 != 0 {
            throw LearnedPinFileError(path: path, problem: "permissions \(Self.octal(status.st_mode)) let group or other change the learned pins",
                                      fix: "run `chmod 600 \(path)`")
        }
        let bytes = try readAll(descriptor)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .io(path, "is not UTF-8 text") }
        do throws(ConfigurationError) {
            return try LearnedPinsDocument.parse(text, source: path)
        } catch {
            // One line, each problem with its line and JSON path; the one fix at the end.
            let problems = error.problems.map { problem in
                (problem.line.map { "line \($0): " } ?? "") + "\(problem.path): \(problem.message)"
            }
            throw LearnedPinFileError(path: path, problem: "is not a valid learned-pins file: " + problems.joined(separator: "; "),
                                      fix: LearnedPinsDocument.resetHint)
        }
    }

    /// Refuses a directory pinproxy could not write the file into: learning
    /// that cannot be kept would trust the host anew on every start.
    func checkWritable() throws(LearnedPinFileError) {
        _ = try checkDirectory()
        guard access(directory, W_OK) == 0 else {
            throw LearnedPinFileError(path: directory, problem: "is not writable: learned pins could not be kept",
                                      fix: "give the pinproxy user write access, or set STATE_DIRECTORY (StateDirectory=pinproxy)")
        }
    }

    /// Replaces the file with `document`, atomically and durably.
    func write(_ document: LearnedPinsDocument) throws(LearnedPinFileError) {
        let temporary = directory + "/.\((path as NSString).lastPathComponent).\(UUID().uuidString.prefix(8)).tmp"
        // O_EXCL|O_NOFOLLOW: a new file, never one planted in its place; 0600 whatever the umask (fchmod).
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .io(temporary, "cannot be created: \(String(cString: strerror(errno)))") }
        var failure = fchmod(descriptor, 0o600) == 0 ? nil : "fchmod: \(String(cString: strerror(errno)))"
        var rest = Array(document.text.utf8)[...]
        while failure == nil && !rest.isEmpty {
            let written = rest.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno != EINTR { failure = "write: \(String(cString: strerror(errno)))" }
            if written > 0 { rest = rest.dropFirst(written) }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = "fsync: \(String(cString: strerror(errno)))" }
        close(descriptor)
        if failure == nil, rename(temporary, path) != 0 { failure = "rename over \(path): \(String(cString: strerror(errno)))" }
        if let failure {
            unlink(temporary)
            throw .io(temporary, failure)
        }
        // The rename is durable only once the directory entry is on disk.
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryDescriptor >= 0 else { throw .io(directory, "cannot be opened to sync: \(String(cString: strerror(errno)))") }
        defer { close(directoryDescriptor) }
        guard fsync(directoryDescriptor) == 0 else { throw .io(directory, "fsync: \(String(cString: strerror(errno)))") }
    }

    /// The directory's owner, after refusing one that is missing, another
    /// user's, or writable by others without the sticky bit.
    private func checkDirectory() throws(LearnedPinFileError) -> uid_t {
        var status = stat()
        guard stat(directory, &status) == 0 else {
            throw LearnedPinFileError(path: directory, problem: "cannot be read: \(String(cString: strerror(errno)))",
                                      fix: "create it, or set STATE_DIRECTORY (StateDirectory=pinproxy) to where learned pins are kept")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw .io(directory, "is not a directory") }
        if geteuid() != 0 { try checkOwner(status.st_uid, of: directory, directoryOwner: nil) }
        if status.st_mode & 0o022 != 0 && status.st_mode & S_ISVTX == 0 {
            throw LearnedPinFileError(path: directory,
                                      problem: "permissions \(Self.octal(status.st_mode)) let group or other replace the learned pins in it",
                                      fix: "run `chmod go-w \(directory)`")
        }
        return status.st_uid
    }

    private func checkOwner(_ owner: uid_t, of file: String, directoryOwner: uid_t?) throws(LearnedPinFileError) {
        guard !trustedOwners(directoryOwner: directoryOwner).contains(owner) else { return }
        throw LearnedPinFileError(path: file, problem: "is owned by uid \(owner), not by uid \(geteuid()) that runs pinproxy",
                                  fix: "run `chown \(geteuid()) \(file)` (or run pinproxy as its owner)")
    }

    private func readAll(_ descriptor: Int32) throws(LearnedPinFileError) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw .io(path, "cannot be read: \(String(cString: strerror(errno)))") }
            if count == 0 { return bytes }
            bytes += buffer[..<count]
            guard bytes.count <= Self.maximumBytes else { throw .io(path, "is larger than \(Self.maximumBytes >> 20) MiB") }
        }
    }

    /// `0644`-style text of a mode's permission bits.
    static func octal(_ mode: mode_t) -> String {
        let text = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }
}
