import Foundation
import Testing

/// The blind tunnel of an unlisted host (SPEC §3.1): bytes relayed both ways
/// "until either side closes or `timeouts.tunnel_idle`". An idle tunnel is
/// closed both ways once nothing moved for `tunnel_idle` (1 s here), while
/// traffic in either direction keeps it open; a client's half-close is
/// passed on, and what the origin sends after it still reaches the client
/// before both ends close; a reset on either side reaches the other as a
/// reset. No socket is left behind either way.
@Suite("CONNECT blind tunnel: tunnel_idle, half-close and reset", .serialized)
struct BlindTunnelTests {
    let bed: ConnectBed

    init() throws {
        bed = try ConnectBed(logLevel: .debug)
    }

    /// Opens a tunnel that has echoed `greeting` once, the way every case starts.
    private func openedTunnel(_ greeting: [UInt8]) throws -> RawClient {
        let (client, answer, pending) = try bed.rawConnect(ConnectBed.tunnelAuthority, early: greeting)
        #expect(answer?.status == 200)
        #expect(readExactly(greeting.count - pending.count, from: client) == Array(greeting[pending.count...]))
        return client
    }

    private func readExactly(_ count: Int, from client: RawClient, timeout: TimeInterval = 5) -> [UInt8] {
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        while received.count < count, deadline.timeIntervalSinceNow > 0 {
            let (data, ending) = client.readSome(timeout: deadline.timeIntervalSinceNow)
            received += data
            if ending != nil { break }
        }
        return received
    }

    @Test("an idle tunnel is closed both ways after tunnel_idle, and logged")
    func idleClosesBothWays() throws {
        let client = try openedTunnel(Array("hello".utf8))
        let quietSince = ContinuousClock.now
        let (rest, ending) = client.read(timeout: ConnectBed.tunnelIdle + 4)
        let quiet = ContinuousClock.now - quietSince
        #expect(ending == .closed, "the client's side is closed")
        #expect(rest.isEmpty, "nothing after the close: \(String(decoding: rest, as: UTF8.self))")
        #expect(quiet >= .milliseconds(900) && quiet < .seconds(3), "closed after \(quiet)")
        let eof = bed.tunnelOrigin.waitForEvent("eof", conn: 1)
        #expect(eof?.received == 5, "the origin's side is closed too, after the 5 bytes it got")
        let log = bed.waitForLog(containing: "tunnel: client idle past its timeout")
        #expect(log.contains("tunnel: client idle past its timeout"), "\(log)")
        #expect(bed.census(upstreamPort: bed.tunnelOrigin.port).total == 0)
        try bed.expectTunnelClientServed()
    }

    @Test("bytes every 0.4 s keep a tunnel open past twice tunnel_idle; it closes once they stop")
    func trafficKeepsItOpen() throws {
        let client = try openedTunnel(Array("start".utf8))
        let started = ContinuousClock.now
        var sent = 5
        while ContinuousClock.now - started < .milliseconds(2400) {
            Thread.sleep(forTimeInterval: 0.4)
            #expect(client.send("."), "the tunnel is still open after \(ContinuousClock.now - started)")
            #expect(readExactly(1, from: client) == Array(".".utf8))
            sent += 1
        }
        let (_, ending) = client.read(timeout: ConnectBed.tunnelIdle + 4)
        #expect(ending == .closed)
        #expect(bed.tunnelOrigin.waitForEvent("eof", conn: 1)?.received == sent)
    }

    @Test("a client's half-close reaches the origin, whose last bytes after it still reach the client; then both ends close")
    func halfClose() throws {
        let request = Array("all of the request".utf8)
        let client = try openedTunnel(request)
        client.shutdownWrite()
        let (tail, ending) = client.read(timeout: 5)
        #expect(Array(tail) == TunnelOrigin.endOfStreamLine(received: request.count), "\(String(decoding: tail, as: UTF8.self))")
        #expect(ending == .closed)
        #expect(bed.tunnelOrigin.waitForEvent("eof", conn: 1)?.received == request.count)
        #expect(!bed.log().contains("idle past its timeout"), "ended by the closes, not by the idle timer")
        let census = bed.census(upstreamPort: bed.tunnelOrigin.port)
        #expect(census.total == 0, "\(census)")
    }

    /// A reset on one side is passed on as a reset (the tunnel is blind: a
    /// peer reading up to the close must not take a crash for an end).
    @Test("an origin's reset reaches the client as a reset, after the bytes before it")
    func originReset() throws {
        let client = try openedTunnel(Array("hello\n".utf8))
        #expect(client.send("RESET\n"))
        #expect(readExactly(6, from: client) == Array("RESET\n".utf8))
        let (rest, ending) = client.read(timeout: 5)
        #expect(rest.isEmpty)
        #expect(ending == .reset)
        #expect(bed.tunnelOrigin.waitForEvent("reset-sent", conn: 1) != nil)
        let census = bed.census(upstreamPort: bed.tunnelOrigin.port)
        #expect(census.total == 0, "\(census)")
    }

    @Test("a client's reset reaches the origin as a reset")
    func clientReset() throws {
        let client = try openedTunnel(Array("hello\n".utf8))
        client.reset()
        #expect(bed.tunnelOrigin.waitForEvent("reset", conn: 1)?.received == 6)
        #expect(bed.tunnelOrigin.waitForEvent("eof", conn: 1, timeout: 0.5) == nil)
        let census = bed.census(upstreamPort: bed.tunnelOrigin.port)
        #expect(census.total == 0, "\(census)")
    }
}
