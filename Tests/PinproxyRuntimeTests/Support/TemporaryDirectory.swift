import Foundation

/// A fresh directory under the system temp dir, removed with everything in it
/// when the value is released.
///
/// The name is short (`/tmp/pinproxy-tests-<UUID>`) because tests bind
/// `AF_UNIX` sockets inside it, and `sun_path` holds 108 bytes.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "pinproxy-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The full path of `name` in this directory (nothing is created).
    func file(_ name: String) -> String { path + "/" + name }

    /// Writes `text` to `name` in this directory and returns the full path.
    @discardableResult
    func write(_ text: String, to name: String) throws -> String {
        let file = file(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }
}
