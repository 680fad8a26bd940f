import COpenSSL
import Foundation
import Glibc
import PinproxyCore
@testable import PinproxyRuntime
import Testing

/// The consumer of `InterceptionAuthority.makeConnection`: a `TLSStream` in
/// the `.server(prefix:)` role on an `EventLoop`, with the first bytes of the
/// ClientHello already read from the socket (as they arrive behind a
/// CONNECT), against an OpenSSL client on its own thread.
@Suite("interception CA: server connections under TLSStream")
struct ServerStreamTests {
    final class Recorder: ByteStreamDelegate {
        let loop: EventLoop
        var connected = false
        var ending: StreamEnd?
        init(loop: EventLoop) { self.loop = loop }
        func streamDidRead(_ stream: ByteStream) {}
        func streamDidDrain(_ stream: ByteStream) {}
        func stream(_ stream: ByteStream, didEnd ending: StreamEnd) { self.ending = ending; loop.stop() }
        func streamDidConnect(_ stream: ByteStream) { connected = true; loop.stop() }
    }

    /// Runs one handshake; returns what the stream reported and the client's error, if any.
    static func handshake(ca: TestCA, host: HostName, clientSNI: String?, prefixLength: Int) throws -> (Recorder, String?) {
        // A side that fails closes while the other still writes: EPIPE, not a signal that ends the runner.
        signal(SIGPIPE, SIG_IGN)
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { throw TestFailure("socketpair") }
        let clientSocket = pair[0], serverSocket = pair[1]
        let root = ca.file("root.pem")
        let clientError = Locked<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { close(clientSocket); done.signal() }
            guard let context = SSL_CTX_new(TLS_client_method()) else { return }
            defer { SSL_CTX_free(context) }
            SSL_CTX_load_verify_locations(context, root, nil)
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            guard let ssl = SSL_new(context) else { return }
            defer { SSL_free(ssl) }
            SSL_set_fd(ssl, clientSocket)
            if let clientSNI { _ = shim_SSL_set_tlsext_host_name(ssl, clientSNI) }
            _ = SSL_set1_host(ssl, host.value)
            ERR_clear_error()
            if SSL_connect(ssl) != 1 {
                clientError.withLock { $0 = OpenSSLError.describeQueue(fallback: "connect failed") }
                return
            }
            var byte: UInt8 = 0
            _ = SSL_read(ssl, &byte, 1)  // tickets; then the server closes
        }
        thread.start()
        // What a CONNECT parser would have read past the request head.
        var prefix = [UInt8](repeating: 0, count: prefixLength)
        if prefixLength > 0 { #expect(recv(serverSocket, &prefix, prefixLength, Int32(MSG_WAITALL)) == prefixLength) }
        _ = fcntl(serverSocket, F_SETFL, fcntl(serverSocket, F_GETFL) | O_NONBLOCK)
        let loop = try EventLoop()
        let recorder = Recorder(loop: loop)
        let connection = try ca.authority.makeConnection(for: host)
        let stream = try #require(TLSStream(loop: loop, descriptor: serverSocket, connection: connection, role: .server(prefix: prefix)))
        stream.delegate = recorder
        stream.startHandshake()
        let backstop = Timer(loop: loop) { loop.stop() }
        backstop.schedule(after: .seconds(10))
        loop.run()
        backstop.cancel()
        stream.close()
        done.wait()
        return (recorder, clientError.withLock { $0 })
    }

    @Test("with the first bytes of the ClientHello already read, the handshake completes", arguments: [0, 1, 5, 64])
    func completes(prefixLength: Int) throws {
        let ca = try TestCA(names: ["example.com"])
        let (recorder, clientError) = try Self.handshake(ca: ca, host: try #require(HostName("api.example.com")),
                                                         clientSNI: "api.example.com", prefixLength: prefixLength)
        #expect(recorder.connected, "\(String(describing: recorder.ending))")
        #expect(clientError == nil)
    }

    @Test("a wrong SNI ends the stream with .tlsFailed carrying the refusal, and the client sees unrecognized_name")
    func wrongSNI() throws {
        let ca = try TestCA(names: ["example.com"])
        let (recorder, clientError) = try Self.handshake(ca: ca, host: try #require(HostName("api.example.com")),
                                                         clientSNI: "other.example.com", prefixLength: 5)
        #expect(!recorder.connected)
        #expect(recorder.ending == .tlsFailed("the client's SNI \"other.example.com\" is not the CONNECT host api.example.com: unrecognized_name alert"))
        #expect(clientError?.contains("tlsv1 unrecognized name") == true, "\(clientError ?? "-")")
    }
}


