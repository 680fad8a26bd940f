import Foundation
import PinproxyCore

/// The public suffix list as the running process knows it: parsed again only
/// when the file changed (its inode, size or modification time), so that a
/// configuration build (start, every reload, `check`) reuses the list it
/// already has. Parsing Debian's 230 KB list is most of what a reload costs
/// (a storm of ten SIGHUPs a second under ThreadSanitizer fell behind on it).
enum PublicSuffixCache {
    private struct Stamp: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: timespec

        static func == (lhs: Stamp, rhs: Stamp) -> Bool {
            lhs.device == rhs.device && lhs.inode == rhs.inode && lhs.size == rhs.size
                && lhs.modified.tv_sec == rhs.modified.tv_sec && lhs.modified.tv_nsec == rhs.modified.tv_nsec
        }
    }

    private static let cached = Locked<(path: String, stamp: Stamp, list: PublicSuffixList, serial: Int)?>(nil)
    private static let parses = Locked(0)

    /// The list in `path`, from the cache when the file is the one parsed last.
    static func list(at path: String = PublicSuffixList.debianPath) throws(PublicSuffixListError) -> PublicSuffixList {
        try versionedList(at: path).list
    }

    /// The list and the serial number of the parse that made it: equal
    /// serials, the same file as parsed (a reload compares them to tell
    /// whether wildcard names are judged as before).
    static func versionedList(at path: String = PublicSuffixList.debianPath)
        throws(PublicSuffixListError) -> (list: PublicSuffixList, serial: Int) {
        var status = stat()
        guard stat(path, &status) == 0 else { return (try PublicSuffixList(contentsOf: path), nextSerial()) }
        let stamp = Stamp(device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
                          modified: status.st_mtim)
        if let hit = cached.withLock({ $0 }), hit.path == path, hit.stamp == stamp { return (hit.list, hit.serial) }
        let list = try PublicSuffixList(contentsOf: path)
        let serial = nextSerial()
        cached.withLock { $0 = (path, stamp, list, serial) }
        return (list, serial)
    }

    private static func nextSerial() -> Int {
        parses.withLock { count in
            count += 1
            return count
        }
    }
}
