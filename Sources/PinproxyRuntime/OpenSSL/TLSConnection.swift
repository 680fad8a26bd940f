import PinproxyCore
internal import COpenSSL

/// One TLS connection's `SSL`, owned: the single place it is freed.
///
/// The stream that runs the connection (`TLSStream`) borrows it, frees it
/// before closing the socket, and nothing else frees it: every path, a failed
/// set-up included, frees the `SSL` exactly once.
final class TLSConnection {
    /// The owned `SSL*`; never null.
    let pointer: OpaquePointer

    /// Server side (`TLSServerContext`): the name the client's SNI must carry
    /// (SPEC §3.1: the CONNECT host). nil on client connections.
    let expectedServerName: HostName?

    /// Why pinproxy's own handshake callback refused the peer; nil when it
    /// did not (then OpenSSL's error queue says what failed). Set during the
    /// handshake, read after `TLSStream` reports `.tlsFailed`.
    private(set) var refusal: TLSRefusal?

    init(takingOwnership pointer: OpaquePointer, expectedServerName: HostName? = nil) {
        self.pointer = pointer
        self.expectedServerName = expectedServerName
    }

    deinit { SSL_free(pointer) }

    /// OpenSSL reads ahead: one `read(2)` takes every record the socket
    /// holds, up to `readAheadLength`, instead of two calls (header, then
    /// body) per record.
    func enableReadAhead() {
        SSL_set_read_ahead(pointer, 1)
        SSL_set_default_read_buffer_len(pointer, Self.readAheadLength)
    }

    /// Two full records (a TLS 1.3 record is up to 16,406 bytes, a TLS 1.2
    /// AES-GCM one 16,413) per `read(2)`; OpenSSL's default buffer holds
    /// one. The size is a balance: before decoding each record OpenSSL moves
    /// whatever follows it in the buffer to the front, so a larger buffer
    /// trades read calls for copies. Relaying 1 MiB bodies, interleaved
    /// against the same upstream, CPU per response: one record 1,853 µs, two
    /// 1,681, 64 KiB 1,758; in a second run two 1,494 against 64 KiB's 1,589
    /// (HAProxy 1,711). The contexts release empty buffers
    /// (`SSL_MODE_RELEASE_BUFFERS`), so an idle connection holds none. The
    /// 468 bytes of slack make 33,280 (32 KiB + 512), the size measured.
    static let readAheadLength = 2 * 16_406 + 468

    /// The protocol version negotiated, e.g. `TLSv1.3`.
    var protocolVersion: String { String(cString: SSL_get_version(pointer)) }

    /// Whether the handshake resumed a session (no certificate was verified in it).
    var resumedSession: Bool { SSL_session_reused(pointer) == 1 }

    /// The ALPN protocol negotiated, nil when none was.
    var negotiatedProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(pointer, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The server name the client sent (server side), nil when it sent none.
    var requestedServerName: String? {
        SSL_get_servername(pointer, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) }
    }

    /// The servername callback's decision (RFC 6066 §3): the client's SNI
    /// must be the expected name, compared case-insensitively (DNS names are,
    /// RFC 4343). Returns false, recording why, to abort the handshake.
    func didReceiveServerName(_ name: String?) -> Bool {
        guard let expected = expectedServerName else { return true }
        guard let name else {
            refusal = .serverNameMissing(expected: expected)
            return false
        }
        guard name.lowercased() == expected.value else {
            refusal = .serverNameMismatch(expected: expected, received: name)
            return false
        }
        return true
    }
}

/// A handshake pinproxy itself refused, with the evidence (not an OpenSSL failure).
enum TLSRefusal: Sendable, Hashable, CustomStringConvertible {
    /// The client sent no server_name extension; pinproxy expected this host.
    case serverNameMissing(expected: HostName)
    /// The client's server_name differs from the CONNECT host.
    case serverNameMismatch(expected: HostName, received: String)

    var description: String {
        switch self {
        case let .serverNameMissing(expected):
            "the client sent no SNI, expected \(expected) (the CONNECT host): unrecognized_name alert"
        case let .serverNameMismatch(expected, received):
            "the client's SNI \(received.debugDescription) is not the CONNECT host \(expected): unrecognized_name alert"
        }
    }
}
