import Foundation
import Testing

extension HTTPSClientsEndToEndTests {
    /// SPEC §3.1's blast radius, seen by clients in real handshakes: a client
    /// that trusts pinproxy's CA root (as `pinproxy ca install` makes it) and
    /// meets a leaf for a name outside the CA's scope, signed by the CA's own
    /// issuing key, refuses it for the name constraints alone. The leaf comes
    /// through a blind tunnel, so only the client judges it. Interception/
    /// NameConstraintEnforcementTests proves the same of `openssl verify` and
    /// Go's `x509.Verify` on files; this is curl's and Go's net/http's
    /// handshake path. The control is in the same world: a leaf the same key
    /// and issuer mint for an in-scope name (the intercepted host) is accepted.
    @Suite("the interception CA's name constraints hold in clients' handshakes")
    struct InterceptionCAConstraintsInClients {
        /// Fetches the pinned (in-scope) and the unlisted (forged, out-of-scope) host, trusting only pinproxy's root.
        static func fetchBoth(with client: HTTPSClient) throws -> (inScope: ClientOutcome, forged: ClientOutcome, world: ConnectWorld) {
            let world = try ConnectWorld(origin: .bytes, payload: .small, unlisted: .forgedWithInterceptionKey)
            let inScope = try client.fetch(world.url(.small, at: ConnectHost.pinned), proxyPort: world.proxy.forwardPort,
                                           trusting: world.interceptionRoot, in: world.directory)
            let forged = try client.fetch(world.url(.small, at: ConnectHost.unlisted), proxyPort: world.proxy.forwardPort,
                                          trusting: world.interceptionRoot, in: world.directory)
            return (inScope, forged, world)
        }

        /// The forged origin finished a handshake with nobody: no request reached it.
        static func expectNoRequestReachedForgedOrigin(_ world: ConnectWorld, sourceLocation: SourceLocation = #_sourceLocation) {
            let records = world.forgedOrigin?.waitForConnections(1) ?? []
            #expect(records.count == 1, sourceLocation: sourceLocation)
            #expect(records.map(\.requests) == [0], sourceLocation: sourceLocation)
            E2EVerdict.expectNoEvent(proxy: world.proxy, sourceLocation: sourceLocation)
        }

        @Test("curl (OpenSSL) refuses an out-of-scope leaf signed by the CA's issuing key: permitted subtree violation",
              .enabled(if: FileManager.default.isExecutableFile(atPath: CurlHTTPSClient.path), "curl is not installed"))
        func curlRefusesOutOfScopeLeaf() throws {
            let (inScope, forged, world) = try Self.fetchBoth(with: CurlHTTPSClient())
            #expect(inScope.status == 200, "\(inScope.error)")
            // curl 60: the peer's certificate failed verification.
            #expect(forged.exitStatus == 60, "\(forged.error)")
            #expect(forged.error.contains("permitted subtree violation"), "\(forged.error)")
            Self.expectNoRequestReachedForgedOrigin(world)
        }

        @Test("Go's net/http refuses an out-of-scope leaf signed by the CA's issuing key: not authorized to sign for this name",
              .enabled(if: GoHTTPSClient.go != nil, "go is not installed (Debian golang-go)"))
        func goRefusesOutOfScopeLeaf() throws {
            let (inScope, forged, world) = try Self.fetchBoth(with: GoHTTPSClient())
            #expect(inScope.status == 200, "\(inScope.error)")
            #expect(forged.exitStatus == 1)
            #expect(forged.error.contains("x509: a root or intermediate certificate is not authorized to sign for this name"),
                    "\(forged.error)")
            Self.expectNoRequestReachedForgedOrigin(world)
        }
    }
}
