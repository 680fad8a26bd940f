import Foundation

extension FileManager {
    /// The permission bits of `path` (following symlinks), e.g. 0o600; nil
    /// when it does not exist. For the CA's files, whose modes are part of
    /// the contract (SPEC §3.1: directory 0700, keys 0600).
    func permissions(of path: String) -> mode_t? {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mode & 0o7777 : nil
    }
}
