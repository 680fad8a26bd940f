import Foundation

/// The local CA's files in `interception.ca_dir` (SPEC §3.1), and the rules
/// they are kept under, as ssh keeps `~/.ssh`:
///
/// - the directory is mode 0700 and each key 0600; reading refuses a
///   directory or key that group or other can access, or that is owned by
///   another user (see `trustedOwners`), naming the `chmod`/`chown` that fixes it;
/// - files are opened with `O_NOFOLLOW` and checked on the open descriptor
///   (`fstat`), so what is checked is what is read;
/// - files are written atomically (a temporary file, `fsync`, `rename`, then
///   `fsync` of the directory), and keys are created with mode 0600, never
///   readable by others even for an instant.
///
/// Layout: `root.pem` (what clients trust), `issuing.pem` and `issuing.key`
/// (signs the leaves), `leaf.key` (the one key of every leaf). There is no
/// root key: see `InterceptionCAIssuer`.
struct CADirectory {
    static let rootCertificate = "root.pem"
    static let issuingCertificate = "issuing.pem"
    static let issuingKey = "issuing.key"
    static let leafKey = "leaf.key"

    let path: String

    init(_ path: String) {
        // An absolute path in every message, so an operator knows which directory is meant.
        self.path = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    func file(_ name: String) -> String { (path.hasSuffix("/") ? path : path + "/") + name }

    /// The owner the files go to when `ca init` runs as root and the
    /// directory's parent belongs to another, non-root user: a systemd
    /// `StateDirectory=` of a `DynamicUser=` service (`/var/lib/pinproxy`,
    /// owned by the service's dynamic user), which must be able to read them.
    /// nil when not running as root or the parent is root's.
    var handoverOwner: (uid: uid_t, gid: gid_t)? {
        guard geteuid() == 0, let parent = Self.status(of: parentPath, following: true), parent.st_uid != 0 else { return nil }
        return (parent.st_uid, parent.st_gid)
    }

    /// The users whose files pinproxy reads: itself and root (as ssh), and,
    /// when running as root, the owner `ca init` hands the files to, so that
    /// an operator's `pinproxy check` or `ca show` reads the service's CA.
    var trustedOwners: Set<uid_t> {
        var owners: Set<uid_t> = [geteuid(), 0]
        if let owner = handoverOwner { owners.insert(owner.uid) }
        return owners
    }

    var parentPath: String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "/" : parent
    }

    /// Whether the CA exists here (its root certificate is the last file written).
    var exists: Bool { Self.status(of: file(Self.rootCertificate), following: false) != nil }

    // MARK: reading

    /// Refuses a directory that group or other can enter, or that another user owns.
    func checkDirectory() throws(InterceptionCAError) {
        guard let status = Self.status(of: path, following: true) else {
            throw .io(path, "cannot be read: \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw .io(path, "is not a directory") }
        try checkOwner(status, of: path)
        if status.st_mode & 0o077 != 0 {
            throw InterceptionCAError(kind: .permissions, path: path,
                                      problem: "permissions \(Self.octal(status.st_mode)) are too open: the CA's keys must not be reachable by group or other",
                                      fix: "run `chmod 700 \(path)`")
        }
    }

    /// Reads a private key file: a regular file, mode 0600 or stricter, owned by a trusted user.
    func readKey(_ name: String) throws(InterceptionCAError) -> [UInt8] {
        try read(name) { status, file throws(InterceptionCAError) in
            if status.st_mode & 0o077 != 0 {
                throw InterceptionCAError(kind: .permissions, path: file,
                                          problem: "permissions \(Self.octal(status.st_mode)) are too open: this private key must not be readable by group or other",
                                          fix: "run `chmod 600 \(file)`")
            }
        }
    }

    /// Reads a certificate file: a regular file owned by a trusted user that no one else can write.
    func readCertificate(_ name: String) throws(InterceptionCAError) -> [UInt8] {
        try read(name) { status, file throws(InterceptionCAError) in
            if status.st_mode & 0o022 != 0 {
                throw InterceptionCAError(kind: .permissions, path: file,
                                          problem: "permissions \(Self.octal(status.st_mode)) let group or other replace the certificate",
                                          fix: "run `chmod 644 \(file)`")
            }
        }
    }

    private func read(_ name: String, check: (stat, String) throws(InterceptionCAError) -> Void) throws(InterceptionCAError) -> [UInt8] {
        let file = file(name)
        let descriptor = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { throw .io(file, "is missing") }
            if errno == ELOOP { throw .io(file, "is a symbolic link; the CA's files must be regular files") }
            throw .io(file, "cannot be opened: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .io(file, "cannot be examined: \(String(cString: strerror(errno)))") }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .io(file, "is not a regular file") }
        try checkOwner(status, of: file)
        try check(status, file)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw .io(file, "cannot be read: \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            bytes += buffer[..<count]
            guard bytes.count <= 1 << 20 else { throw .io(file, "is larger than 1 MiB: not a CA file") }
        }
        return bytes
    }

    private func checkOwner(_ status: stat, of file: String) throws(InterceptionCAError) {
        guard !trustedOwners.contains(status.st_uid) else { return }
        throw InterceptionCAError(kind: .permissions, path: file,
                                  problem: "is owned by uid \(status.st_uid), not by uid \(geteuid()) that runs pinproxy",
                                  fix: "run `chown \(geteuid()) \(file)` (or run pinproxy as its owner)")
    }

    // MARK: writing

    /// Creates the directory (mode 0700; missing parents 0755) or tightens an
    /// existing one of ours to 0700; hands it to `owner` when given.
    func prepare(owner: (uid: uid_t, gid: gid_t)?) throws(InterceptionCAError) {
        if Self.status(of: path, following: true) == nil {
            do {
                try FileManager.default.createDirectory(atPath: parentPath, withIntermediateDirectories: true)
            } catch {
                throw .io(parentPath, "cannot be created: \(error.localizedDescription)")
            }
            // mkdir with 0700 (the umask can only remove bits), so the directory is never open.
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
                throw .io(path, "cannot be created: \(String(cString: strerror(errno)))")
            }
        }
        guard let status = Self.status(of: path, following: true), status.st_mode & S_IFMT == S_IFDIR else {
            throw .io(path, "is not a directory")
        }
        try checkOwner(status, of: path)
        guard chmod(path, 0o700) == 0 else { throw .io(path, "cannot be set to mode 0700: \(String(cString: strerror(errno)))") }
        if let owner, chown(path, owner.uid, owner.gid) != 0 {
            throw .io(path, "cannot be handed to uid \(owner.uid): \(String(cString: strerror(errno)))")
        }
    }

    /// A file written but not yet in place (`commit` renames it).
    struct StagedFile {
        let temporary: String
        let final: String
    }

    /// Writes `bytes` to a new temporary file beside `name`, created with
    /// `mode` (0600 for keys) from the first instant, flushed to disk and
    /// handed to `owner`.
    func stage(_ bytes: [UInt8], as name: String, mode: mode_t, owner: (uid: uid_t, gid: gid_t)?) throws(InterceptionCAError) -> StagedFile {
        let final = file(name)
        let temporary = file(".\(name).\(UUID().uuidString.prefix(8)).tmp")
        // O_EXCL|O_NOFOLLOW: a new file, never one planted in our place; mode is at most `mode` (umask).
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw .io(temporary, "cannot be created: \(String(cString: strerror(errno)))") }
        var failure: String?
        // fchmod: exactly `mode`, whatever the umask removed.
        if fchmod(descriptor, mode) != 0 { failure = "fchmod: \(String(cString: strerror(errno)))" }
        var rest = bytes[...]
        while failure == nil && !rest.isEmpty {
            let written = rest.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                failure = "write: \(String(cString: strerror(errno)))"
            } else {
                rest = rest.dropFirst(written)
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = "fsync: \(String(cString: strerror(errno)))" }
        if failure == nil, let owner, fchown(descriptor, owner.uid, owner.gid) != 0 {
            failure = "cannot be handed to uid \(owner.uid): \(String(cString: strerror(errno)))"
        }
        close(descriptor)
        if let failure {
            unlink(temporary)
            throw .io(temporary, failure)
        }
        return StagedFile(temporary: temporary, final: final)
    }

    /// Renames the staged files into place in order, then makes the renames durable.
    func commit(_ files: [StagedFile]) throws(InterceptionCAError) {
        for (index, staged) in files.enumerated() where rename(staged.temporary, staged.final) != 0 {
            let reason = String(cString: strerror(errno))
            files[index...].forEach { unlink($0.temporary) }
            throw .io(staged.final, "cannot be replaced: \(reason)")
        }
        let directory = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw .io(path, "cannot be opened to sync: \(String(cString: strerror(errno)))") }
        defer { close(directory) }
        guard fsync(directory) == 0 else { throw .io(path, "fsync: \(String(cString: strerror(errno)))") }
    }

    /// Removes staged files that will not be committed.
    func discard(_ files: [StagedFile]) { files.forEach { unlink($0.temporary) } }

    // MARK: helpers

    static func status(of path: String, following: Bool) -> stat? {
        var status = stat()
        let result = following ? stat(path, &status) : lstat(path, &status)
        return result == 0 ? status : nil
    }

    /// `0644`-style text of a mode's permission bits.
    static func octal(_ mode: mode_t) -> String {
        let text = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }
}
