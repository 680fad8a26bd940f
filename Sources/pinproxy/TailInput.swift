import Foundation
import PinproxyCore
import PinproxyRuntime

/// Where `pinproxy tail` reads lines from besides a live log (`LogFollower`):
/// a rotated log compressed by logrotate, and standard input (`-`), either of
/// which may be gzip (SPEC §4: `.gz` files are read, never as malformed lines).
///
/// Compression is recognised by gzip's magic bytes, not by the name: logrotate
/// names files `violations.jsonl.2.gz`, but `-` has no name at all.
enum TailInput {
    /// Why an input cannot be read; the message names `zcat` for a gzip that does not decode.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Whether the file at `path` starts like gzip; nil when it cannot be opened (`errno` set).
    static func isGzipFile(_ path: String) -> Bool? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var prefix = [UInt8](repeating: 0, count: GzipDecoder.magic.count)
        let count = prefix.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        return count == prefix.count && GzipDecoder.isGzip(prefix)
    }

    /// Every line of the gzip file at `path`.
    static func gzipLines(_ path: String) throws(Failure) -> [ViolationLogReader.Line] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Failure(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var lines: [ViolationLogReader.Line] = []
        try stream(descriptor, name: path) { lines += $0 }
        return lines
    }

    /// Reads `descriptor` to its end, decompressing when it starts like gzip,
    /// and hands each batch of complete lines to `each` as it arrives (a pipe
    /// is printed as it is written); the unterminated last line comes at the end.
    static func stream(_ descriptor: Int32, name: String, _ each: ([ViolationLogReader.Line]) -> Void) throws(Failure) {
        var reader = ViolationLogReader()
        var decoder: GzipDecoder?
        var isFirstRead = true
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw Failure(description: "cannot read \(name): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            let bytes = Array(buffer[..<count])
            if isFirstRead {
                isFirstRead = false
                // A pipe may deliver one byte first; gzip's two-byte magic is then taken on the first byte.
                if bytes.first == GzipDecoder.magic[0] && (bytes.count == 1 || GzipDecoder.isGzip(bytes)) {
                    do { decoder = try GzipDecoder() } catch { throw Failure(description: "\(name): \(error)") }
                }
            }
            guard let decoder else {
                each(reader.consume(bytes))
                continue
            }
            do {
                try decoder.decode(bytes) { each(reader.consume($0)) }
            } catch {
                throw unreadable(name, error)
            }
        }
        if let decoder {
            do { try decoder.finish() } catch { throw unreadable(name, error) }
        }
        each(reader.finishFile())
    }

    private static func unreadable(_ name: String, _ error: GzipDecoder.DecodeError) -> Failure {
        let zcat = name == standardInputName ? "zcat" : "zcat \(name)"
        return Failure(description: "\(name) starts like gzip but \(error); see what `\(zcat)` says about it")
    }

    static let standardInputName = "standard input"
}
