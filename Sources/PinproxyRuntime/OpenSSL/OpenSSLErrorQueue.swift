internal import COpenSSL

/// Empties the calling thread's OpenSSL error queue before a call whose
/// failure is then read from it (`SSL_get_error`, `OpenSSLError.describeQueue`).
enum OpenSSLErrorQueue {
    /// `ERR_clear_error` visits every slot of the queue whether or not it
    /// holds anything (OpenSSL 3.0: some 840 instructions), and the TLS
    /// streams clear before each `SSL_read` and `SSL_write`, twice per
    /// keep-alive request. `ERR_peek_error` tells an empty queue from its
    /// indices, and is what `SSL_get_error` itself consults, so clearing only
    /// a queue that holds an error leaves nothing either reader could see.
    static func clearBeforeCall() {
        if ERR_peek_error() != 0 { ERR_clear_error() }
    }
}
