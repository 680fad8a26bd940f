import Foundation

/// A log of one JSON object per line that another process appends to (a
/// peer's per-connection or per-request events), read incrementally: lines
/// are decoded once and kept, since tests ask again and again and the file
/// only grows. A line the writer has not finished yet is left for later.
final class JSONLinesLog<Record: Decodable>: @unchecked Sendable {
    let path: String
    private let lock = NSLock()
    private var consumedBytes: UInt64 = 0
    private var decoded: [Record] = []

    init(path: String) { self.path = path }

    /// Every record logged so far, in order (lines that do not decode are skipped).
    func records() -> [Record] {
        lock.withLock {
            guard let handle = FileHandle(forReadingAtPath: path) else { return decoded }
            defer { try? handle.close() }
            try? handle.seek(toOffset: consumedBytes)
            let fresh = (try? handle.readToEnd()) ?? Data()
            guard let lastNewline = fresh.lastIndex(of: UInt8(ascii: "\n")) else { return decoded }
            let complete = fresh[fresh.startIndex...lastNewline]
            consumedBytes += UInt64(complete.count)
            decoded += complete.split(separator: UInt8(ascii: "\n")).compactMap {
                try? JSONDecoder().decode(Record.self, from: Data($0))
            }
            return decoded
        }
    }

    /// Waits until at least `count` records are logged, then returns them all
    /// (fewer when `timeout` passes first).
    func waitForRecords(_ count: Int, timeout: TimeInterval = 5) -> [Record] {
        eventually(timeout: timeout, records, until: { $0.count >= count })
    }
}
