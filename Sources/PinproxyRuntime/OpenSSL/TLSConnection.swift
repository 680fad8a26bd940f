internal import COpenSSL

/// One TLS connection's `SSL`, owned: the single place it is freed.
///
/// The stream that runs the connection (`TLSStream`) borrows it, frees it
/// before closing the socket, and nothing else frees it: every path, a failed
/// set-up included, frees the `SSL` exactly once.
final class TLSConnection {
    /// The owned `SSL*`; never null.
    let pointer: OpaquePointer

    init(takingOwnership pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { SSL_free(pointer) }

    /// OpenSSL reads ahead: one `read(2)` takes every record the socket
    /// holds, instead of two calls (header, then body) per record.
    func enableReadAhead() { SSL_set_read_ahead(pointer, 1) }

    /// Records OpenSSL has read from the socket but not yet decrypted.
    var hasBufferedRecords: Bool { SSL_has_pending(pointer) == 1 }

    /// The protocol version negotiated, e.g. `TLSv1.3`.
    var protocolVersion: String { String(cString: SSL_get_version(pointer)) }

    /// Whether the handshake resumed a session (no certificate was verified in it).
    var resumedSession: Bool { SSL_session_reused(pointer) == 1 }
}
