import COpenSSL
import Foundation
import PinproxyCore
@testable import PinproxyRuntime

/// A TLS handshake over a real AF_UNIX socket pair between a server
/// `TLSConnection` from `TLSServerContext` and an OpenSSL client `SSL` that
/// trusts only the CA's root and checks the host name. Both sockets are
/// non-blocking and the two sides are stepped in turn on one thread.
enum SocketPairHandshake {
    /// The client's settings.
    struct Client {
        var root: String
        /// The SNI to send; nil sends none.
        var serverName: String?
        /// The name the client verifies the certificate against.
        var verifyHost: String
        var alpn: [String]? = ["http/1.1"]
        var maxVersion: Int32 = 0
        var minVersion: Int32 = 0
        var tls12Ciphers: String?
        var groups: String?
    }

    /// A client `SSL_CTX` kept across handshakes (so its sessions can be offered again).
    final class ClientContext {
        let pointer: OpaquePointer
        /// `keepsSessions`: every session the client gets (each TLS 1.3 ticket
        /// is one) goes to the context's own cache, where `sessionsHeld` counts them.
        init(_ client: Client, keepsSessions: Bool = false) throws {
            guard let context = SSL_CTX_new(TLS_client_method()) else { throw OpenSSLError.drain("client SSL_CTX_new") }
            pointer = context
            if keepsSessions { _ = shim_SSL_CTX_set_session_cache_mode(context, shim_SSL_SESS_CACHE_CLIENT) }
            guard SSL_CTX_load_verify_locations(context, client.root, nil) == 1 else { throw OpenSSLError.drain("load root") }
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            if client.maxVersion != 0 {
                // TLS 1.1 is below OpenSSL 3's default security level: allow it on the client only.
                if client.maxVersion < TLS1_2_VERSION { SSL_CTX_set_security_level(context, 0) }
                _ = shim_SSL_CTX_set_max_proto_version(context, client.maxVersion)
            }
            if client.minVersion != 0 { _ = shim_SSL_CTX_set_min_proto_version(context, client.minVersion) }
            if let ciphers = client.tls12Ciphers, SSL_CTX_set_cipher_list(context, ciphers) != 1 {
                throw OpenSSLError.drain("client ciphers")
            }
            if let groups = client.groups, shim_SSL_CTX_set1_groups_list(context, groups) != 1 {
                throw OpenSSLError.drain("client groups")
            }
            if let alpn = client.alpn {
                let wire = alpn.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
                guard SSL_CTX_set_alpn_protos(context, wire, UInt32(wire.count)) == 0 else { throw OpenSSLError.drain("client ALPN") }
            }
        }
        deinit { SSL_CTX_free(pointer) }
    }

    struct Outcome {
        var completed: Bool
        /// OpenSSL's words on each side when it failed.
        var clientError: String?
        var serverError: String?
        var version: String?
        var alpn: String?
        var resumed: Bool
        /// Subjects of the chain the client received, leaf first.
        var servedChain: [String]
        var negotiatedGroup: String?
        /// The client's session after the handshake (and its tickets), owned by the caller.
        var session: TLSSessionHandle?
        /// Sessions the client's context holds after this handshake: with
        /// `ClientContext.keepsSessions`, one a TLS 1.3 ticket received.
        var sessionsHeld: Int
    }

    static func run(server: TLSConnection, client: Client, context: ClientContext? = nil,
                    offering session: TLSSessionHandle? = nil) throws -> Outcome {
        let clientContext = try context ?? ClientContext(client)
        // A side that fails closes while the other still writes: EPIPE, not a signal that ends the runner.
        signal(SIGPIPE, SIG_IGN)
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { throw TestFailure("socketpair") }
        defer { close(pair[0]); close(pair[1]) }
        for descriptor in pair { _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) }
        guard let ssl = SSL_new(clientContext.pointer) else { throw OpenSSLError.drain("client SSL_new") }
        defer { SSL_free(ssl) }
        SSL_set_fd(ssl, pair[0])
        SSL_set_connect_state(ssl)
        if let name = client.serverName { _ = shim_SSL_set_tlsext_host_name(ssl, name) }
        _ = SSL_set1_host(ssl, client.verifyHost)
        if let session { SSL_set_session(ssl, session.pointer) }
        SSL_set_fd(server.pointer, pair[1])

        var clientDone = false, serverDone = false
        var clientError: String?, serverError: String?
        for _ in 0..<200 where !(clientDone && serverDone) && clientError == nil && serverError == nil {
            if !clientDone { step(ssl, done: &clientDone, error: &clientError) }
            if !serverDone { step(server.pointer, done: &serverDone, error: &serverError) }
        }
        // Let the side that did not fail read the other's alert.
        for _ in 0..<4 {
            if clientError == nil && !clientDone { step(ssl, done: &clientDone, error: &clientError) }
            if serverError == nil && !serverDone { step(server.pointer, done: &serverDone, error: &serverError) }
        }
        let completed = clientDone && serverDone
        var buffer = [UInt8](repeating: 0, count: 1024)
        // TLS 1.3 tickets come after the server's Finished: a read takes them in.
        if completed {
            _ = SSL_read(ssl, &buffer, Int32(buffer.count))
            // A clean close: OpenSSL marks the session of an SSL freed without one not resumable.
            _ = SSL_shutdown(ssl)
            ERR_clear_error()
        }
        let chain = CertificateStack.certificates(in: SSL_get_peer_cert_chain(ssl)).map(\.facts.subject)
        let group = completed ? OBJ_nid2sn(shim_SSL_get_negotiated_group(ssl)).map { String(cString: $0) } : nil
        return Outcome(completed: completed, clientError: clientError, serverError: serverError,
                       version: completed ? server.protocolVersion : nil, alpn: server.negotiatedProtocol,
                       resumed: SSL_session_reused(ssl) == 1, servedChain: chain, negotiatedGroup: group,
                       session: SSL_get1_session(ssl).map { TLSSessionHandle(takingOwnership: $0) },
                       sessionsHeld: SSL_CTX_ctrl(clientContext.pointer, SSL_CTRL_SESS_NUMBER, 0, nil))
    }

    private static func step(_ ssl: OpaquePointer, done: inout Bool, error: inout String?) {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 { done = true; return }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return
        default: error = OpenSSLError.describeQueue(fallback: "handshake failed")
        }
    }
}
