internal import COpenSSL
internal import CLibevent

/// Versions of the C libraries pinproxy runs on, for `--version`.
public enum RuntimeVersion {
    public static var openSSL: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }
    public static var libevent: String { String(cString: event_get_version()) }
}
