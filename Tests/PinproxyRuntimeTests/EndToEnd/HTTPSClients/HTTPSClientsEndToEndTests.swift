import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// Real HTTPS clients through pinproxy's `CONNECT` (SPEC §3.1), each in its
/// own suite (the extensions of this type): curl, Python's urllib and
/// requests, git, Go's net/http and Java's HttpClient, every one run as the
/// program an operator would run, with `https_proxy` (or its own proxy
/// setting) naming the forward listener, against loopback TLS origins of a
/// PKI made at test time. Each meets the same four cases (`ConnectCases`).
/// Serialized: a client run is a whole runtime starting on a 2-core machine,
/// and the 64 MiB tunnels are measured one at a time.
@Suite("Real HTTPS clients through CONNECT", .serialized)
enum HTTPSClientsEndToEndTests {}

/// A case's world and what the client did in it, for a suite's own further checks.
struct ConnectRun {
    let world: ConnectWorld
    let outcome: ClientOutcome
}

/// The four cases every client meets (the matrix), each a complete
/// test body run on a fresh `ConnectWorld` for `client`.
enum ConnectCases {
    /// (1) A pinned host is intercepted: pinproxy verifies the origin against
    /// the pin before its `200`, then the client's TLS ends at a leaf of the
    /// local CA, which is the only root the client trusts, so a blind tunnel
    /// (the origin's own certificate) would fail here.
    @discardableResult
    static func pinnedHostIsInterceptedIntact(_ client: HTTPSClient) throws -> ConnectRun {
        let world = try ConnectWorld(origin: client.origin, payload: .small)
        let outcome = try client.fetch(world.url(.small, at: ConnectHost.pinned), proxyPort: world.proxy.forwardPort,
                                       trusting: world.interceptionRoot, in: world.directory)
        #expect(outcome.exitStatus == 0, "\(outcome.error)")
        #expect(outcome.status == 200, "\(outcome.error)")
        #expect(outcome.body == (try world.expectedBody(.small)))
        E2EVerdict.expectNoEvent(proxy: world.proxy)
        return ConnectRun(world: world, outcome: outcome)
    }

    /// (2) A man in the middle whose CA pinproxy's trust store trusts, but
    /// whose key is not pinned: `502` at CONNECT, no TLS with the client, not
    /// one application byte to the impostor, one `connect` violation.
    @discardableResult
    static func impostorIsRefusedAtConnect(_ client: HTTPSClient) throws -> ConnectRun {
        let world = try ConnectWorld(origin: client.origin, payload: .small)
        let outcome = try client.fetch(world.url(.small, at: ConnectHost.impostor), proxyPort: world.proxy.forwardPort,
                                       trusting: world.interceptionRoot, in: world.directory)
        #expect(outcome.exitStatus != 0)
        #expect(outcome.status == nil)
        #expect(client.reportsRefusedConnect(outcome, status: 502), "the client said: \(outcome.error)")
        #expect((outcome.body?.length ?? 0) == 0)
        E2EVerdict.expectNothingRelayed(world.impostor.waitForConnections(1))
        E2EVerdict.expectEvent(action: .blocked, reason: .pinMismatch, rule: ConnectHost.impostor, policy: .pinPublicKeys,
                               proxy: world.proxy, host: ConnectHost.impostor)
        let event = world.proxy.sink.events.first
        #expect(event?.clientTransport == .connect)
        #expect(event?.requestMethod == "CONNECT")
        #expect(event?.requestTarget == ConnectHost.impostor + ":443")
        #expect(world.proxy.logLines().map { $0["client_transport"] as? String } == ["connect"])
        return ConnectRun(world: world, outcome: outcome)
    }

    /// (3) An unlisted host under `default_policy: "default"` is a blind
    /// tunnel: the client trusts only the origin's root (an intercepted
    /// connection would fail) and gets 64 MiB byte-exact.
    @discardableResult
    static func unlistedHostIsTunnelledByteExact(_ client: HTTPSClient) throws -> ConnectRun {
        let world = try ConnectWorld(origin: client.origin, payload: .large)
        let outcome = try client.fetch(world.url(.large, at: ConnectHost.unlisted), proxyPort: world.proxy.forwardPort,
                                       trusting: world.originRoot, in: world.directory)
        #expect(outcome.exitStatus == 0, "\(outcome.error)")
        #expect(outcome.status == 200, "\(outcome.error)")
        #expect(outcome.body == (try world.expectedBody(.large)))
        E2EVerdict.expectNoEvent(proxy: world.proxy)
        return ConnectRun(world: world, outcome: outcome)
    }

    /// (4) The same unlisted host through a proxy with `default_policy:
    /// "deny"`: `403` at CONNECT, and no violation (a denial is not one).
    @discardableResult
    static func deniedHostGetsForbidden(_ client: HTTPSClient) throws -> ConnectRun {
        let world = try ConnectWorld(origin: client.origin, payload: .small)
        let outcome = try client.fetch(world.url(.small, at: ConnectHost.unlisted), proxyPort: world.denyingProxy.forwardPort,
                                       trusting: world.originRoot, in: world.directory)
        #expect(outcome.exitStatus != 0)
        #expect(outcome.status == nil)
        #expect(client.reportsRefusedConnect(outcome, status: 403), "the client said: \(outcome.error)")
        E2EVerdict.expectNoEvent(proxy: world.denyingProxy)
        return ConnectRun(world: world, outcome: outcome)
    }
}
