import CLibevent
import Foundation
@testable import PinproxyRuntime
import Testing

/// A new client's first bytes, read at accept, are delivered to its stream
/// (`PlainStream.deliver`). Reading is armed after a delivery only if it was
/// asked for: a session asks only once it has seen the bytes
/// (`ClientSession.start(headDeadline:firstBytesFollow:)`), so a request that
/// ends its connection stops reading at once and its read event is never
/// added (and deleted) for nothing; one that needs more asks then.
@Suite("PlainStream: the first delivery")
struct PlainStreamDeliveryTests {
    /// Stops reading when the delivered bytes are a whole request, as a
    /// session does for one that ends its connection, and asks for more
    /// otherwise; records whether the read event was added when the bytes arrived.
    final class Reader: ByteStreamDelegate {
        let stopsReading: Bool
        var armedWhenRead: Bool?
        init(stopsReading: Bool) { self.stopsReading = stopsReading }
        func streamDidRead(_ stream: ByteStream) {
            let plain = stream as! PlainStream
            armedWhenRead = plain.isReadArmed
            plain.input.drain(plain.input.count)
            if stopsReading { plain.stopReading() } else { plain.startReading(timeout: EventTimeout(.seconds(5))) }
        }
        func streamDidDrain(_ stream: ByteStream) {}
        func stream(_ stream: ByteStream, didEnd ending: StreamEnd) {}
    }

    /// A stream on one end of a socket pair, `bytes` delivered to it; with
    /// `asksFirst`, reading asked for before the delivery.
    private static func deliver(_ bytes: [UInt8], stopsReading: Bool, asksFirst: Bool) throws -> (Reader, PlainStream, [Int32]) {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { throw TestFailure("socketpair") }
        _ = fcntl(pair[1], F_SETFL, fcntl(pair[1], F_GETFL) | O_NONBLOCK)
        let loop = try EventLoop()
        let stream = try #require(PlainStream(loop: loop, descriptor: pair[1]))
        let reader = Reader(stopsReading: stopsReading)
        stream.delegate = reader
        if asksFirst { stream.startReading(timeout: EventTimeout(.seconds(5))) }
        let first = try #require(evbuffer_new())
        defer { evbuffer_free(first) }
        let buffer = EventBuffer(pointer: first)
        buffer.append(bytes)
        stream.deliver(buffer)
        return (reader, stream, pair)
    }

    private static let request = Array("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".utf8)

    @Test("a delivery that ends reading never arms the read event")
    func endsReading() throws {
        let (reader, stream, pair) = try Self.deliver(Self.request, stopsReading: true, asksFirst: false)
        defer { stream.close(); close(pair[0]) }
        #expect(reader.armedWhenRead == false)
        #expect(!stream.isReadArmed)
    }

    @Test("a delivery after which more is wanted arms the read event once the bytes are handled")
    func wantsMore() throws {
        let (reader, stream, pair) = try Self.deliver(Array(Self.request.prefix(10)), stopsReading: false, asksFirst: false)
        defer { stream.close(); close(pair[0]) }
        #expect(reader.armedWhenRead == false)
        #expect(stream.isReadArmed)
    }

    @Test("an empty delivery arms the reading asked for before it")
    func emptyDelivery() throws {
        let (reader, stream, pair) = try Self.deliver([], stopsReading: false, asksFirst: true)
        defer { stream.close(); close(pair[0]) }
        #expect(reader.armedWhenRead == nil)
        #expect(stream.isReadArmed)
    }

    @Test("reading asked for before a delivery is armed at once: the stream does not defer it, the session must not ask")
    func armedAtOnce() throws {
        let (reader, stream, pair) = try Self.deliver(Self.request, stopsReading: true, asksFirst: true)
        defer { stream.close(); close(pair[0]) }
        #expect(reader.armedWhenRead == true)
        #expect(!stream.isReadArmed)
    }
}
