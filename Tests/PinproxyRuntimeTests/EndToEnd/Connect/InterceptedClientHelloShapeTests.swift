import Foundation
import Testing

/// However a ClientHello reaches pinproxy, the handshake of an intercepted
/// tunnel completes: cut into 1-byte TCP segments (TCP_NODELAY, one write
/// each), re-framed into many TLS records (RFC 8446 §5.1 lets a handshake
/// message span records), both at once, and grown large — an ALPN list of
/// kilobytes before `http/1.1`, in one record and past the 16 KiB record
/// limit, where the client's own OpenSSL splits it. After each, a request
/// on the tunnel is answered, so the handshake really finished.
///
/// What the client cannot send: a post-quantum key share (~1.2 KB, ML-KEM).
/// The Python here links OpenSSL 3.0, which has no such group, and neither
/// has pinproxy's (`TLSServerContext.groups`); the ALPN padding stands in
/// for the size.
@Suite("CONNECT interception: a ClientHello in pieces, in many records, or large still completes the handshake", .serialized)
struct InterceptedClientHelloShapeTests {
    let bed: ConnectBed

    init() throws {
        // The 1-byte segments take about half a second, and nothing here measures a timeout.
        bed = try ConnectBed(handshakeTimeout: 20)
    }

    struct Shape: CustomTestStringConvertible, Sendable {
        var name: String
        var arguments: [String]
        /// At least this many records on the wire.
        var minimumRecords: Int
        /// At least this many bytes on the wire.
        var minimumLength: Int
        var testDescription: String { name }
    }

    static let shapes = [
        Shape(name: "1-byte TCP segments", arguments: ["--segment-size", "1"], minimumRecords: 1, minimumLength: 200),
        Shape(name: "records of 16 bytes", arguments: ["--record-size", "16"], minimumRecords: 20, minimumLength: 300),
        Shape(name: "records of 1 byte", arguments: ["--record-size", "1"], minimumRecords: 200, minimumLength: 1000),
        Shape(name: "records of 7 bytes in 3-byte segments",
              arguments: ["--record-size", "7", "--segment-size", "3", "--segment-delay", "0.0005"], minimumRecords: 50,
              minimumLength: 500),
        Shape(name: "an 8 KiB ALPN list, one record", arguments: ["--alpn-padding", "8000"], minimumRecords: 1,
              minimumLength: 8000),
        Shape(name: "a 20 KiB ALPN list, records split by the client", arguments: ["--alpn-padding", "20000"],
              minimumRecords: 2, minimumLength: 20000),
        Shape(name: "an 8 KiB ALPN list in 1 KiB records and 1 KiB segments",
              arguments: ["--alpn-padding", "8000", "--record-size", "1024", "--segment-size", "1024"], minimumRecords: 8,
              minimumLength: 8000),
    ]

    @Test("the handshake completes and the tunnel serves a request", arguments: shapes)
    func shape(_ shape: Shape) throws {
        let marker = "/shape-\(UUID().uuidString)"
        let outcome = try bed.client(shape.arguments + ["--request", "GET \(marker) HTTP/1.1\nHost: api.example.com\n\n"])
        #expect((outcome.helloRecords ?? 0) >= shape.minimumRecords, "\(outcome.helloRecords ?? 0) records")
        #expect((outcome.helloLength ?? 0) >= shape.minimumLength, "\(outcome.helloLength ?? 0) bytes")
        #expect(outcome.handshake == "ok", "\(outcome)")
        #expect(outcome.alpn == "http/1.1", "the padding names precede http/1.1: pinproxy picks it")
        #expect(outcome.peerSan == ["api.example.com"])
        #expect(outcome.responses.map(\.status) == [200], "\(outcome)")
        #expect(outcome.responses.first?.json["target"] as? String == marker)
        #expect(!bed.log().contains("client TLS for"), "\(bed.log())")
    }
}
