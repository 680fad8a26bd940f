internal import COpenSSL
import Foundation

/// A resumable TLS session (TLS 1.2 session or TLS 1.3 ticket): the single owner
/// of one reference to an `SSL_SESSION*`, released in `deinit`.
///
/// Resumption skips certificate verification, so a handle must only be offered
/// to connections of the same `TLSClientContext` (same policy and trust store)
/// that verified it; the pool drops handles on reload.
final class TLSSessionHandle: @unchecked Sendable {
    /// The owned reference; never null.
    let pointer: OpaquePointer

    /// Adopts a reference already counted for us (`SSL_SESSION_dup`'s new session).
    init(takingOwnership pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { SSL_SESSION_free(pointer) }

    /// Whether the session may still be offered (not past its lifetime, resumable).
    var isResumable: Bool { SSL_SESSION_is_resumable(pointer) == 1 }

    /// How long ago the server issued the session (whole seconds, as OpenSSL keeps it).
    var age: Duration { .seconds(max(0, Int64(time(nil)) - Int64(SSL_SESSION_get_time(pointer)))) }
}
