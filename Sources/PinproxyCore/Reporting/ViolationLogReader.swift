/// Splits the bytes of a violation log into numbered lines, as they arrive.
///
/// Pure (no file access) so following, rotation and partial writes can be
/// tested with byte arrays. A line is only handed out once its `"\n"` has
/// arrived: a line still being written is held, never parsed half-way.
public struct ViolationLogReader: Sendable {
    /// One complete line, without its newline, and its 1-based number in the file.
    public struct Line: Sendable, Hashable {
        public var number: Int
        public var text: String
    }

    /// Bytes after the last newline seen: the start of a line still being written.
    public private(set) var pending: [UInt8] = []
    /// Lines handed out so far in the current file.
    public private(set) var lineCount = 0

    public init() {}

    /// Appends `bytes` read from the file and returns every line they complete.
    public mutating func consume(_ bytes: some Sequence<UInt8>) -> [Line] {
        var lines: [Line] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                lineCount += 1
                lines.append(Line(number: lineCount, text: Self.decode(pending)))
                pending.removeAll(keepingCapacity: true)
            } else {
                pending.append(byte)
            }
        }
        return lines
    }

    /// Ends the current file (it was rotated away and read to its end): an
    /// unterminated last line is handed out as it is, and numbering restarts
    /// for the next file.
    public mutating func finishFile() -> [Line] {
        var lines: [Line] = []
        if !pending.isEmpty {
            lineCount += 1
            lines.append(Line(number: lineCount, text: Self.decode(pending)))
        }
        pending.removeAll()
        lineCount = 0
        return lines
    }

    /// UTF-8 text of a line; a trailing `"\r"` (a log edited on another system) is dropped.
    private static func decode(_ bytes: [UInt8]) -> String {
        let trimmed = bytes.last == UInt8(ascii: "\r") ? bytes.dropLast() : bytes[...]
        return String(decoding: trimmed, as: UTF8.self)
    }
}
