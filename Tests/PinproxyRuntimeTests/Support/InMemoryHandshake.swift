import Foundation
import COpenSSL
import PinproxyCore
@testable import PinproxyRuntime

/// A TLS handshake between a client `SSL` from a `TLSClientContext` and a test
/// server over `BIO_new_bio_pair`: no sockets, no threads, pumped until both sides stop.
enum InMemoryHandshake {
    /// The test server's settings.
    struct Server {
        var chain: [X509Certificate]
        var key: TestKey
        var maxVersion: Int32 = 0
        var cipherList: String?
        var requestsClientCertificate = false
    }

    /// What happened, seen from both ends.
    struct Outcome {
        var completed: Bool
        var serverSawClientCertificate: Bool
        /// `SSL_get_version` on the server, e.g. `TLSv1.3`; nil when the handshake failed.
        var negotiatedVersion: String?
        var alpn: String?
        /// Application bytes the server read: must be 0 whenever the client rejected the peer.
        var serverApplicationBytes: Int
        var sessionReused: Bool
    }

    /// Bytes the client writes with `SSL_write` from the start, before the handshake completes.
    static let request = Array("GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n".utf8)

    /// A server `SSL_CTX` kept across handshakes (its ticket keys and session cache make resumption possible).
    final class ServerContext {
        let pointer: OpaquePointer
        init(_ server: Server) throws { pointer = try makeServerContext(server) }
        deinit { SSL_CTX_free(pointer) }
    }

    static func run(context: TLSClientContext, handshake: UpstreamHandshake, server: Server,
                    resuming session: TLSSessionHandle? = nil) throws -> Outcome {
        try run(context: context, handshake: handshake, server: ServerContext(server), resuming: session)
    }

    static func run(context: TLSClientContext, handshake: UpstreamHandshake, server: ServerContext,
                    resuming session: TLSSessionHandle? = nil) throws -> Outcome {
        let serverContext = server.pointer
        let connection = try context.makeConnection(for: handshake, resuming: session)
        let client = connection.pointer
        guard let serverSSL = SSL_new(serverContext) else { throw OpenSSLError.drain("server SSL_new") }
        defer { SSL_free(serverSSL) }
        var clientBIO: OpaquePointer?
        var serverBIO: OpaquePointer?
        guard BIO_new_bio_pair(&clientBIO, 0, &serverBIO, 0) == 1 else { throw OpenSSLError.drain("BIO pair") }
        // Each SSL owns its half of the pair from here on and frees it in SSL_free.
        SSL_set_bio(client, clientBIO, clientBIO)
        SSL_set_bio(serverSSL, serverBIO, serverBIO)
        SSL_set_accept_state(serverSSL)

        var written = false, clientFailed = false, serverFailed = false
        var serverBytes = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<64 {
            if !written && !clientFailed {
                // SSL_write drives the handshake and only sends once it has completed.
                let result = request.withUnsafeBytes { SSL_write(client, $0.baseAddress, Int32($0.count)) }
                if result > 0 { written = true } else { clientFailed = isFatal(client, result) }
            } else if written {
                // Lets the client process post-handshake messages (TLS 1.3 session tickets).
                _ = SSL_read(client, &buffer, Int32(buffer.count))
            }
            if !serverFailed {
                let result = SSL_read(serverSSL, &buffer, Int32(buffer.count))
                if result > 0 { serverBytes += Int(result) } else { serverFailed = isFatal(serverSSL, result) }
            }
            ERR_clear_error()
            if clientFailed || (written && serverBytes >= request.count) { break }
        }
        // One more client read for tickets sent right after the server's Finished.
        if written { _ = SSL_read(client, &buffer, Int32(buffer.count)); ERR_clear_error() }

        let completed = written && SSL_is_init_finished(client) == 1
        var alpnData: UnsafePointer<UInt8>?
        var alpnLength: UInt32 = 0
        SSL_get0_alpn_selected(serverSSL, &alpnData, &alpnLength)
        return Outcome(
            completed: completed,
            serverSawClientCertificate: SSL_get0_peer_certificate(serverSSL) != nil,
            negotiatedVersion: completed ? String(cString: SSL_get_version(serverSSL)) : nil,
            alpn: alpnData.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(alpnLength)), as: UTF8.self) },
            serverApplicationBytes: serverBytes,
            sessionReused: SSL_session_reused(client) == 1)
    }

    private static func isFatal(_ ssl: OpaquePointer, _ result: Int32) -> Bool {
        let error = SSL_get_error(ssl, result)
        return error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE
    }

    private static func makeServerContext(_ server: Server) throws -> OpaquePointer {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw OpenSSLError.drain("server SSL_CTX_new") }
        guard SSL_CTX_use_certificate(context, server.chain[0].pointer) == 1,
              SSL_CTX_use_PrivateKey(context, server.key.pointer) == 1 else {
            SSL_CTX_free(context)
            throw OpenSSLError.drain("server certificate")
        }
        for certificate in server.chain.dropFirst() {
            // add_extra_chain_cert takes ownership of one reference: give it its own.
            X509_up_ref(certificate.pointer)
            _ = shim_SSL_CTX_add_extra_chain_cert(context, certificate.pointer)
        }
        if server.maxVersion != 0 { _ = shim_SSL_CTX_set_max_proto_version(context, server.maxVersion) }
        if let list = server.cipherList { _ = SSL_CTX_set_cipher_list(context, list) }
        if server.requestsClientCertificate { SSL_CTX_set_verify(context, SSL_VERIFY_PEER, acceptAnyClient) }
        SSL_CTX_set_alpn_select_cb(context, selectHTTP11, nil)
        return context
    }

    /// Accepts whatever client certificate arrives: the tests only ask whether one did.
    private static let acceptAnyClient: @convention(c) (Int32, OpaquePointer?) -> Int32 = { _, _ in 1 }

    /// Selects `http/1.1` when the client offers it (pointing into the client's list).
    private static let selectHTTP11: @convention(c) (
        OpaquePointer?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, UnsafeMutablePointer<UInt8>?,
        UnsafePointer<UInt8>?, UInt32, UnsafeMutableRawPointer?
    ) -> Int32 = { _, out, outLength, offered, offeredLength, _ in
        guard let offered else { return SSL_TLSEXT_ERR_NOACK }
        var index = 0
        while index < Int(offeredLength) {
            let length = Int(offered[index])
            let name = UnsafeBufferPointer(start: offered + index + 1, count: min(length, Int(offeredLength) - index - 1))
            if Array(name) == Array("http/1.1".utf8) {
                out?.pointee = offered + index + 1
                outLength?.pointee = UInt8(length)
                return SSL_TLSEXT_ERR_OK
            }
            index += 1 + length
        }
        return SSL_TLSEXT_ERR_NOACK
    }
}
