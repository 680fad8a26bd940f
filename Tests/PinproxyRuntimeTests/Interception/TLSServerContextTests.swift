import COpenSSL
import Foundation
import PinproxyCore
@testable import PinproxyRuntime
import Testing

/// The client-facing TLS of an intercepted CONNECT (SPEC §3.1): real
/// handshakes over a socket pair between `InterceptionAuthority.makeConnection`
/// and an OpenSSL client that trusts only the CA's root.
@Suite("interception CA: the server TLS context")
struct TLSServerContextTests {
    let ca: TestCA
    let host: HostName

    init() throws {
        ca = try TestCA(names: ["example.com"])
        host = try #require(HostName("api.example.com"))
    }

    func client(sni: String? = "api.example.com") -> SocketPairHandshake.Client {
        SocketPairHandshake.Client(root: ca.file("root.pem"), serverName: sni, verifyHost: "api.example.com")
    }

    @Test("the right SNI: TLS 1.3, ALPN http/1.1, the leaf and the issuing certificate served, verified by the client")
    func handshakeCompletes() throws {
        let server = try ca.authority.makeConnection(for: host)
        let outcome = try SocketPairHandshake.run(server: server, client: client())
        #expect(outcome.completed, "client: \(outcome.clientError ?? "-"), server: \(outcome.serverError ?? "-")")
        #expect(outcome.version == "TLSv1.3")
        #expect(outcome.alpn == "http/1.1")
        #expect(outcome.servedChain == ["CN=api.example.com", ca.authority.issuing.facts.subject])
        #expect(outcome.negotiatedGroup == "X25519")
        #expect(server.refusal == nil)
        #expect(server.requestedServerName == "api.example.com")
    }

    @Test("SNI is compared case-insensitively")
    func sniCase() throws {
        let outcome = try SocketPairHandshake.run(server: try ca.authority.makeConnection(for: host), client: client(sni: "API.Example.COM"))
        #expect(outcome.completed, "\(outcome.clientError ?? "") \(outcome.serverError ?? "")")
    }

    @Test("a different SNI is refused with unrecognized_name, and the connection says why")
    func wrongSNI() throws {
        let server = try ca.authority.makeConnection(for: host)
        let outcome = try SocketPairHandshake.run(server: server, client: client(sni: "www.example.com"))
        #expect(!outcome.completed)
        #expect(outcome.clientError?.contains("tlsv1 unrecognized name") == true, "\(outcome.clientError ?? "-")")
        #expect(server.refusal == .serverNameMismatch(expected: host, received: "www.example.com"))
        #expect(server.refusal?.description == "the client's SNI \"www.example.com\" is not the CONNECT host api.example.com: unrecognized_name alert")
    }

    @Test("no SNI is refused with unrecognized_name: OpenSSL runs the servername callback without the extension too")
    func noSNI() throws {
        let server = try ca.authority.makeConnection(for: host)
        let outcome = try SocketPairHandshake.run(server: server, client: client(sni: nil))
        #expect(!outcome.completed)
        #expect(outcome.clientError?.contains("tlsv1 unrecognized name") == true, "\(outcome.clientError ?? "-")")
        #expect(server.refusal == .serverNameMissing(expected: host))
    }

    @Test("a client that speaks at most TLS 1.1 is refused")
    func tls11Refused() throws {
        var old = client()
        old.maxVersion = TLS1_1_VERSION
        let server = try ca.authority.makeConnection(for: host)
        let outcome = try SocketPairHandshake.run(server: server, client: old)
        #expect(!outcome.completed)
        #expect(outcome.serverError?.contains("unsupported protocol") == true, "\(outcome.serverError ?? "-")")
        #expect(server.refusal == nil)
    }

    @Test("TLS 1.2 works with an ECDHE-ECDSA AEAD suite; without ECDHE suites or ECDHE groups there is no handshake")
    func tls12ForwardSecrecyOnly() throws {
        var tls12 = client()
        tls12.maxVersion = TLS1_2_VERSION
        let accepted = try SocketPairHandshake.run(server: try ca.authority.makeConnection(for: host), client: tls12)
        #expect(accepted.completed, "\(accepted.clientError ?? "") \(accepted.serverError ?? "")")
        #expect(accepted.version == "TLSv1.2")
        #expect(accepted.alpn == "http/1.1")

        var staticRSA = tls12
        staticRSA.tls12Ciphers = "AES128-GCM-SHA256:DHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES128-SHA"
        let noSuite = try SocketPairHandshake.run(server: try ca.authority.makeConnection(for: host), client: staticRSA)
        #expect(!noSuite.completed)
        #expect(noSuite.serverError?.contains("no shared cipher") == true, "\(noSuite.serverError ?? "-")")

        var finiteField = client()
        finiteField.groups = "ffdhe2048:ffdhe3072"
        let noGroup = try SocketPairHandshake.run(server: try ca.authority.makeConnection(for: host), client: finiteField)
        #expect(!noGroup.completed)
        #expect(noGroup.serverError != nil)
    }

    @Test("ALPN: offered without http/1.1, none is negotiated (no alert); not offered, none")
    func alpnNoAck() throws {
        var h2 = client()
        h2.alpn = ["h2"]
        let onlyH2 = try SocketPairHandshake.run(server: try ca.authority.makeConnection(for: host), client: h2)
        #expect(onlyH2.completed, "\(onlyH2.clientError ?? "") \(onlyH2.serverError ?? "")")
        #expect(onlyH2.alpn == nil)
        var both = client()
        both.alpn = ["h2", "http/1.1"]
        let preferred = try SocketPairHandshake.run(server: try ca.authority.makeConnection(for: host), client: both)
        #expect(preferred.alpn == "http/1.1")
        var none = client()
        none.alpn = nil
        let without = try SocketPairHandshake.run(server: try ca.authority.makeConnection(for: host), client: none)
        #expect(without.completed)
        #expect(without.alpn == nil)
    }

    @Test("a reconnecting client resumes with its ticket (TLS 1.3 and TLS 1.2), without a new leaf signature, and again with the ticket the resumption gave it")
    func resumption() throws {
        for version in [TLS1_3_VERSION, TLS1_2_VERSION] {
            var settings = client()
            settings.maxVersion = version
            let context = try SocketPairHandshake.ClientContext(settings)
            let first = try SocketPairHandshake.run(server: try ca.authority.makeConnection(for: host), client: settings, context: context)
            #expect(first.completed && !first.resumed)
            let session = try #require(first.session)
            #expect(SSL_SESSION_has_ticket(session.pointer) == 1 && SSL_SESSION_is_resumable(session.pointer) == 1)
            let second = try SocketPairHandshake.run(server: try ca.authority.makeConnection(for: host), client: settings,
                                                     context: context, offering: session)
            #expect(second.completed, "\(second.clientError ?? "") \(second.serverError ?? "")")
            #expect(second.resumed, "TLS version \(version)")
            // One ticket a full handshake (TLSServerContext.configureSessions): a client that
            // reconnects one connection after another resumes each time with the newest.
            let renewed = try #require(second.session)
            let third = try SocketPairHandshake.run(server: try ca.authority.makeConnection(for: host), client: settings,
                                                    context: context, offering: renewed)
            #expect(third.completed && third.resumed, "TLS version \(version)")
        }
        #expect(ca.authority.cachedLeafCount == 1)
    }

    @Test("a full TLS 1.3 handshake gives the client one ticket, and a resumption a new one for the one it used")
    func oneTicketPerHandshake() throws {
        let context = try SocketPairHandshake.ClientContext(client(), keepsSessions: true)
        let first = try SocketPairHandshake.run(server: try ca.authority.makeConnection(for: host), client: client(), context: context)
        #expect(first.completed && first.version == "TLSv1.3")
        #expect(first.sessionsHeld == 1)
        let second = try SocketPairHandshake.run(server: try ca.authority.makeConnection(for: host), client: client(),
                                                 context: context, offering: first.session)
        #expect(second.completed && second.resumed)
        // OpenSSL's client drops a TLS 1.3 ticket from its cache once it resumed with it.
        #expect(second.sessionsHeld == 1)
    }

    @Test("a ticket from another CA generation does not resume: a full handshake under the new root")
    func ticketsStayInTheirGeneration() throws {
        let context = try SocketPairHandshake.ClientContext(client())
        let first = try SocketPairHandshake.run(server: try ca.authority.makeConnection(for: host), client: client(), context: context)
        let next = try InterceptionAuthority.create(in: ca.directory, for: InterceptionScope(names: ["example.com"]))
        var settings = client()
        settings.root = ca.file("root.pem")
        let second = try SocketPairHandshake.run(server: try next.makeConnection(for: host), client: settings,
                                                 offering: first.session)
        #expect(second.completed, "\(second.clientError ?? "") \(second.serverError ?? "")")
        #expect(!second.resumed)
    }

    @Test("no connection for a host outside the CA's names")
    func outsideScope() throws {
        #expect(throws: InterceptionAuthority.LeafRefusal.outsideScope(try #require(HostName("example.net")))) {
            try ca.authority.makeConnection(for: try #require(HostName("example.net")))
        }
    }
}
