import Foundation
import Testing
@testable import PinproxyRuntime

/// SIGHUP on the real binary and the upstream pool (SPEC §3: a reload retires
/// the pooled connections made under the old policy). A reload that leaves a
/// rule's verification as it was keeps its pooled connection and TLS session:
/// retiring them cost every pooled host a full handshake per reload, all at
/// once on the serving loop. Whatever the rule verifies with that changes —
/// its pins, its files' contents, the trust store's contents — retires both.
@Suite("Reload: pooled connections kept only where nothing they were verified with changed", .serialized)
struct ReloadPoolCarryOverTests {
    /// The upstream's handshakes with the proxy, full and resumed, leaving out
    /// the direct `/stats` requests (one full handshake each) made so far.
    final class Handshakes {
        let upstream: TestUpstream
        let caFile: String
        private var statsRequests = 0

        init(_ upstream: TestUpstream, caFile: String) {
            self.upstream = upstream
            self.caFile = caFile
        }

        func stats() throws -> [String: Int] {
            statsRequests += 1
            return try upstream.stats(caFile: caFile)
        }

        func counts() throws -> (full: Int, resumed: Int) {
            let stats = try stats()
            let resumed = stats["resumed"] ?? 0
            return ((stats["handshakes"] ?? 0) - statsRequests - resumed, resumed)
        }
    }

    static func hosts(_ pins: [String]) -> String {
        let listed = pins.map { "\"\($0)\"" }.joined(separator: ", ")
        return #""hosts": { "api.example.com": { "policy": "pin-public-keys", "pins": [\#(listed)] },"#
            + #" "other.example.com": { "policy": "default" } },"#
    }

    static func expectHandshakes(_ handshakes: Handshakes, full: Int, _ comment: Comment? = nil,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws {
        let counts = try handshakes.counts()
        #expect(counts.full == full && counts.resumed == 0, "\(counts) \(comment?.rawValue ?? "")",
                sourceLocation: sourceLocation)
    }

    static func get(_ world: TestWorld, _ path: String = "/bytes/10") throws -> Int {
        try Curl.run(world.proxyArguments + ["http://api.example.com\(path)"]).status
    }

    static func reload(_ daemon: ChildProcess, _ world: TestWorld, to generation: Int) throws {
        try world.writeConfiguration()
        daemon.send(SIGHUP)
        try daemon.waitForStderr(containing: "configuration generation \(generation) active")
    }

    @Test("an unchanged rule keeps its connection across reloads (one idle, one mid-exchange); a changed pin or trust store makes a full handshake")
    func unchangedRuleKeepsItsConnection() throws {
        let world = try TestWorld()
        let upstream = try world.startUpstream()
        let leafPin = UpstreamPKI.pin(world.pki.chain.leaf.certificate)
        let backup = E2EScenario.backupPin()
        world.configuration.threads = 1
        // A pooled connection outlives the test however slow the machine (the default idle is 60 s).
        world.configuration.timeouts = #""idle": "600s","#
        world.configuration.extra = Self.hosts([leafPin, backup])
        let daemon = try world.startDaemon()
        let handshakes = Handshakes(upstream, caFile: world.pki.rootFile)

        #expect(try Self.get(world) == 200)
        try Self.expectHandshakes(handshakes, full: 1)

        // Another rule changes, this one does not: the idle connection serves on.
        world.configuration.extra = Self.hosts([leafPin, backup]).replacingOccurrences(of: "other.example.com",
                                                                                         with: "another.example.com")
        try Self.reload(daemon, world, to: 2)
        #expect(try Self.get(world) == 200)
        try Self.expectHandshakes(handshakes, full: 1, "the reload retired a connection its rule verifies alike")

        // A reload while an exchange runs on the connection: it is pooled for the new generation when the exchange ends.
        let slow = try BackgroundCurl(world.proxyArguments + ["http://api.example.com/slow/2500/10"], directory: world.directory.path)
        // Long enough for the request to reach the upstream; if it has not, it runs under the
        // next generation and finds the idle connection kept, which the check below accepts too.
        Thread.sleep(forTimeInterval: 1)
        try Self.reload(daemon, world, to: 3)
        #expect(slow.finish(timeout: 20)?.status == 200)
        #expect(try Self.get(world) == 200)
        try Self.expectHandshakes(handshakes, full: 1, "the connection of an exchange that outlived the reload was not pooled again")

        // The rule's pins change (still matching): a new, full handshake, no resumption.
        world.configuration.extra = Self.hosts([leafPin, backup, E2EScenario.backupPin()])
        try Self.reload(daemon, world, to: 4)
        #expect(try Self.get(world) == 200)
        try Self.expectHandshakes(handshakes, full: 2, "a changed pin list kept a connection or session the old one verified")

        // The trust store file's contents change under the same name.
        let otherRoot = try TestPKI.chain().root.certificate
        try (TestPKI.pem(world.pki.chain.root.certificate) + TestPKI.pem(otherRoot))
            .write(toFile: world.pki.rootFile, atomically: true, encoding: .utf8)
        try Self.reload(daemon, world, to: 5)
        #expect(try Self.get(world) == 200)
        try Self.expectHandshakes(handshakes, full: 3, "a changed trust store kept a connection or session the old one verified")

        daemon.send(SIGTERM)
        #expect(daemon.waitForExit(timeout: 20) == 0)
    }

    @Test("a public_keys file whose contents change under the same name retires the connection it verified")
    func changedPinFileRetires() throws {
        let world = try TestWorld()
        let upstream = try world.startUpstream()
        let keys = world.directory.file("keys-\(UUID().uuidString).pem")
        try TestPKI.pem(world.pki.chain.leaf.certificate).write(toFile: keys, atomically: true, encoding: .utf8)
        world.configuration.threads = 1
        world.configuration.timeouts = #""idle": "600s","#
        world.configuration.extra = #""hosts": { "api.example.com": { "policy": "pin-public-keys", "#
            + #""pins": ["\#(E2EScenario.backupPin())"], "public_keys": ["\#(keys)"] } },"#
        let daemon = try world.startDaemon()
        let handshakes = Handshakes(upstream, caFile: world.pki.rootFile)
        #expect(try Self.get(world) == 200)
        try Self.expectHandshakes(handshakes, full: 1)

        try Self.reload(daemon, world, to: 2)
        #expect(try Self.get(world) == 200)
        try Self.expectHandshakes(handshakes, full: 1, "an unchanged file retired the connection")

        // The leaf stays pinned (its certificate is still in the file); the file now pins one more key.
        let other = try TestPKI.chain().leaf.certificate
        try (TestPKI.pem(world.pki.chain.leaf.certificate) + TestPKI.pem(other))
            .write(toFile: keys, atomically: true, encoding: .utf8)
        try Self.reload(daemon, world, to: 3)
        #expect(try Self.get(world) == 200)
        try Self.expectHandshakes(handshakes, full: 2, "a changed public_keys file kept a connection or session it verified")

        daemon.send(SIGTERM)
        #expect(daemon.waitForExit(timeout: 20) == 0)
    }
}
