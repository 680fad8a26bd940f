/// What a failed upstream TLS handshake is called in the 502's body and the
/// log line, when OpenSSL's words alone would send the operator the wrong way.
///
/// "wrong version number" is what OpenSSL reports when the first five bytes
/// of the answer are not a TLS record header: the peer speaks another
/// protocol on that port, most often plain HTTP (`HTTP/1.1 400 …` to a
/// ClientHello), which is the first mistake of pointing pinproxy at a port
/// 80 origin or at a `resolve` entry for the wrong port. pinproxy never
/// falls back to plaintext (SPEC §3), so the words say so and name the port.
/// The `Proxy-Status` error type stays `tls_protocol_error`.
enum UpstreamHandshakeFailure {
    /// OpenSSL's reason text for a first record that is not TLS (`SSL_R_WRONG_VERSION_NUMBER`).
    static let notTLSReason = "wrong version number"

    /// `openSSL`'s detail, reworded when the peer does not speak TLS at all.
    static func detail(openSSL: String, peer: SocketAddress?) -> String {
        guard openSSL.contains(notTLSReason) else { return openSSL }
        let upstream = peer.map { "the upstream at \($0)" } ?? "the upstream"
        let port = peer.map { " on port \($0.port)" } ?? " on that port"
        return "\(upstream) does not speak TLS\(port): its answer is not a TLS record (\(openSSL)); "
            + "is it a plain-HTTP port? pinproxy connects upstream only over TLS"
    }
}
