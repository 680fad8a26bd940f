internal import CZlib
import Foundation

/// Streaming gzip decompression with zlib (RFC 1952), for the rotated logs
/// `pinproxy tail` reads (SPEC §4: logrotate's `compress` leaves
/// `violations.jsonl.2.gz` beside the live log).
///
/// Why zlib in process rather than a `gzip -dc` child: zlib is already on
/// every Debian machine (libz is Priority: required, and OpenSSL links it),
/// a system-library target costs one module map, and an error is then a
/// value at the call site instead of a child's exit status and stderr.
///
/// Concatenated members (`cat a.gz b.gz`, what `gzip` itself accepts) are
/// decoded one after another. Owns its `z_stream`, ended in `deinit`.
public final class GzipDecoder {
    /// Why the bytes are not a gzip stream zlib can decode.
    public struct DecodeError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The two magic bytes every gzip member starts with (RFC 1952 §2.3.1).
    public static let magic: [UInt8] = [0x1f, 0x8b]

    private var stream = z_stream()
    /// Inside a member (false before the first byte and after each member's end).
    private var isInMember = false
    private var isInitialised = false

    public init() throws(DecodeError) {
        // 15 + 16: a 32 KiB window, gzip framing only (no zlib or raw deflate).
        guard shim_inflateInit2(&stream, 15 + 16) == Z_OK else {
            throw DecodeError(description: "zlib cannot start inflating (\(Self.message(of: stream)))")
        }
        isInitialised = true
    }

    deinit { if isInitialised { inflateEnd(&stream) } }

    /// Whether `prefix` (the first bytes of a file) starts a gzip member.
    public static func isGzip(_ prefix: some Collection<UInt8>) -> Bool {
        prefix.starts(with: magic)
    }

    /// Decodes `input`, the next bytes of the compressed stream, handing each
    /// decompressed chunk to `output` as it is made.
    public func decode(_ input: [UInt8], into output: ([UInt8]) -> Void) throws(DecodeError) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var failure: DecodeError?
        input.withUnsafeBufferPointer { source in
            guard let base = source.baseAddress, !source.isEmpty else { return }
            // zlib's next_in is not const in its C declaration, but inflate only reads it.
            stream.next_in = UnsafeMutablePointer(mutating: base)
            stream.avail_in = uInt(source.count)
            // A full output buffer may leave output inside zlib even when all input is taken: go round again.
            var isOutputFull = false
            while stream.avail_in > 0 || isOutputFull {
                if !isInMember {
                    // A member ended with its output all handed out; only more input starts another.
                    guard stream.avail_in > 0 else { break }
                    // Between members: another member may follow (gzip accepts concatenations).
                    if stream.total_in > 0 { inflateReset(&stream) }
                    isInMember = true
                }
                let inputBefore = stream.avail_in
                let result = chunk.withUnsafeMutableBufferPointer { target -> Int32 in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                isOutputFull = stream.avail_out == 0
                if produced > 0 { output(Array(chunk[..<produced])) }
                switch result {
                case Z_OK, Z_BUF_ERROR:
                    // With input left and a free output buffer, no progress at all is a stream zlib cannot go on with.
                    if produced == 0 && inputBefore > 0 && stream.avail_in == inputBefore {
                        failure = DecodeError(description: "not a valid gzip stream (zlib made no progress)")
                        return
                    }
                case Z_STREAM_END:
                    isInMember = false
                default:
                    failure = DecodeError(description: "not a valid gzip stream (\(Self.message(of: stream)))")
                    return
                }
            }
        }
        if let failure { throw failure }
    }

    /// Ends the stream: throws when the last member was cut short.
    public func finish() throws(DecodeError) {
        if isInMember {
            throw DecodeError(description: "the gzip stream ends in the middle of a member (truncated file?)")
        }
    }

    private static func message(of stream: z_stream) -> String {
        stream.msg.map { String(cString: $0) } ?? "no message from zlib"
    }
}
