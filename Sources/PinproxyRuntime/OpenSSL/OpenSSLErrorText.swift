internal import COpenSSL

/// Turns an OpenSSL error code (as libevent's TLS bufferevent keeps it) into
/// OpenSSL's own words for logs and `Proxy-Status` details.
enum OpenSSLErrorText {
    static func describe(_ code: UInt) -> String {
        guard code != 0 else { return "" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
