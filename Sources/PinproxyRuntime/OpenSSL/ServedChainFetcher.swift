internal import COpenSSL
// Socket constants (SOCK_STREAM …) through the libevent module, whose shim
// includes the libc socket headers first: seen through COpenSSL alone they
// were missing in some clean builds.
internal import CLibevent
import Foundation
import PinproxyCore

/// Fetches the certificate chain a TLS server serves, WITHOUT validating it:
/// the engine of `pinproxy pins HOST[:PORT]` (SPEC §1), the tool an operator
/// uses to *learn* pins before writing a policy.
///
/// A blocking connect and handshake with timeouts, not the daemon's event
/// loop: this runs once, from a command line. The single owner of its `SSL_CTX`,
/// `SSL` and socket, all released in `deinit`, whatever path was taken.
public final class ServedChainFetcher {
    /// Why no chain was fetched; the text names the host, the address and the cause.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    private let context: OpaquePointer
    private var ssl: OpaquePointer?
    private var descriptor: Int32 = -1

    private init() throws(Failure) {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw Failure(description: "\(OpenSSLError.drain("SSL_CTX_new"))")
        }
        self.context = context
        // The point of this tool is to see what is served, trusted or not.
        SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
    }

    deinit {
        if let ssl { SSL_free(ssl) }
        if descriptor >= 0 { close(descriptor) }
        SSL_CTX_free(context)
    }

    /// The served chain, leaf first, as the server sent it.
    ///
    /// - Parameters:
    ///   - host: the name sent as SNI (and resolved, unless `connectTo` is given).
    ///   - connectTo: a `resolve` override (SPEC §2): the address actually dialled.
    ///   - timeout: for the TCP connect, and again for each read and write of the handshake.
    public static func fetch(host: String, port: UInt16, connectTo: Endpoint? = nil,
                             timeout: Duration = .seconds(5)) throws(Failure) -> [CertificateFacts] {
        let fetcher = try ServedChainFetcher()
        let addresses = try resolve(connectTo?.host.value ?? host, port: connectTo?.port ?? port)
        var lastProblem = "no address"
        for address in addresses {
            do throws(Failure) {
                try fetcher.connect(to: address, timeout: timeout)
                return try fetcher.handshake(serverName: host, address: address, timeout: timeout)
            } catch {
                lastProblem = error.description
                if fetcher.descriptor >= 0 { close(fetcher.descriptor) }
                fetcher.descriptor = -1
            }
        }
        throw Failure(description: "\(host):\(port): \(lastProblem)")
    }

    /// The certificates of a PEM bundle or DER file, for `pinproxy pins --cert`.
    public static func certificates(inFile path: String) throws -> [CertificateFacts] {
        try X509Certificate.load(contentsOf: path).map(\.facts)
    }

    /// Addresses of `host` in the system resolver's order (getaddrinfo:
    /// /etc/hosts and DNS), or the literal itself.
    private static func resolve(_ host: String, port: UInt16) throws(Failure) -> [SocketAddress] {
        if let literal = SocketAddress(ip: host, port: port) { return [literal] }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            throw Failure(description: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var found: [SocketAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            if let sockaddr = current.pointee.ai_addr, let address = SocketAddress(sockaddr, length: current.pointee.ai_addrlen) {
                found.append(address)
            }
            entry = current.pointee.ai_next
        }
        return found
    }

    /// A non-blocking connect bounded by `timeout` (poll), then back to blocking
    /// with send/receive timeouts for the handshake.
    private func connect(to address: SocketAddress, timeout: Duration) throws(Failure) {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        descriptor = fd
        let result = address.withSockaddr { Glibc.connect(fd, $0, $1) }
        if result != 0 {
            guard errno == EINPROGRESS else {
                throw Failure(description: "connect to \(address): \(String(cString: strerror(errno)))")
            }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            // poll(2) is never restarted after a signal handler (signal(7)):
            // an interrupted wait goes on for what is left of the timeout.
            let deadline = ContinuousClock.now.advanced(by: timeout)
            var ready: Int32
            repeat {
                let left = ContinuousClock.now.duration(to: deadline)
                let milliseconds = max(0, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
                ready = poll(&poller, 1, Int32(clamping: milliseconds))
            } while ready < 0 && errno == EINTR
            guard ready > 0 else { throw Failure(description: "connect to \(address) timed out") }
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length)
            guard code == 0 else { throw Failure(description: "connect to \(address): \(String(cString: strerror(code)))") }
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        SocketOptions.setBlockingTimeouts(fd, .seconds(timeout.components.seconds))
    }

    /// `SSL_connect` on the connected socket with SNI = `serverName`; the peer's chain.
    private func handshake(serverName: String, address: SocketAddress, timeout: Duration) throws(Failure) -> [CertificateFacts] {
        ERR_clear_error()
        if let ssl { SSL_free(ssl) }
        guard let ssl = SSL_new(context) else { throw Failure(description: "\(OpenSSLError.drain("SSL_new"))") }
        self.ssl = ssl
        // RFC 6066 §3: SNI carries DNS names only, never IP literals.
        if HostName(serverName)?.isIPAddress == false { _ = shim_SSL_set_tlsext_host_name(ssl, serverName) }
        SSL_set_fd(ssl, descriptor)
        guard SSL_connect(ssl) == 1 else {
            let error = OpenSSLError.drain("TLS handshake with \(address)")
            throw Failure(description: error.messages.isEmpty
                          ? "TLS handshake with \(address) failed (\(String(cString: strerror(errno))))" : "\(error)")
        }
        // On the client side the peer chain includes the leaf.
        let chain = CertificateStack.certificates(in: SSL_get_peer_cert_chain(ssl)).map(\.facts)
        _ = SSL_shutdown(ssl)
        guard !chain.isEmpty else { throw Failure(description: "\(address) served no certificate") }
        return chain
    }
}
