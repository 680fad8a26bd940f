import Foundation
import PinproxyCore
@testable import PinproxyRuntime
import Testing

/// Leaves (SPEC §3.1): ECDSA P-256, the host as the only SAN, 7 days, cached
/// per host and CA generation, refused outside the CA's names.
@Suite("interception CA: leaves")
struct LeafIssuanceTests {
    static func host(_ text: String) throws -> HostName { try #require(HostName(text)) }

    @Test("a leaf: CN and the one SAN are the host, P-256 with the shared key, serverAuth, not a CA, an hour back and 7 days long")
    func leafProfile() throws {
        let ca = try TestCA(names: ["example.com"])
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let leaf = try ca.authority.leaf(for: try Self.host("api.example.com"), now: now)
        let facts = leaf.certificate.facts
        let profile = try #require(facts.profile)
        #expect(facts.subject == "CN=api.example.com")
        #expect(facts.issuer == ca.authority.issuing.facts.subject)
        #expect(profile.dnsNames == ["api.example.com"])
        #expect(profile.publicKey == .ellipticCurve("P-256"))
        #expect(profile.extendedKeyUsage == [CertificateProfile.serverAuth])
        #expect(!profile.isCA)
        #expect(facts.notBefore == now.addingTimeInterval(-3_600))
        #expect(facts.notAfter.timeIntervalSince(facts.notBefore) == 7 * 86_400)
        #expect(leaf.certificate.subjectPublicKeyInfo == ca.authority.leafIssuer.leafKey.subjectPublicKeyInfo)
        #expect(leaf.serialNumber.count == 16)
        #expect(leaf.certificate.serialNumber == Array(leaf.serialNumber.drop { $0 == 0 }))
    }

    @Test("openssl x509 -text shows exactly one SAN and the critical key usage, basic constraints and key identifiers")
    func leafUnderOpenSSLText() throws {
        let ca = try TestCA(names: ["example.com"])
        let leaf = try ca.authority.leaf(for: try Self.host("api.example.com"))
        let path = ca.scratch.file("leaf.pem")
        try Data(leaf.certificate.pem).write(to: URL(fileURLWithPath: path))
        let text = try ChildProcess.run("/usr/bin/openssl", ["x509", "-noout", "-text", "-in", path]).output
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let san = try #require(lines.firstIndex(of: "X509v3 Subject Alternative Name:"))
        #expect(lines[san + 1] == "DNS:api.example.com")
        for expected in ["X509v3 Key Usage: critical", "Digital Signature", "X509v3 Basic Constraints: critical", "CA:FALSE",
                         "X509v3 Extended Key Usage:", "TLS Web Server Authentication", "X509v3 Subject Key Identifier:",
                         "X509v3 Authority Key Identifier:", "Signature Algorithm: ecdsa-with-SHA256"] {
            #expect(lines.contains(expected), "\(expected)")
        }
        #expect(!text.contains("Name Constraints"))
    }

    @Test("a host longer than commonName's 64 characters gets an empty subject and a critical SAN (RFC 5280 §4.2.1.6)")
    func longHost() throws {
        let ca = try TestCA(names: ["example.com"])
        let long = String(repeating: "a", count: 60) + ".sub.example.com"
        let leaf = try ca.authority.leaf(for: try Self.host(long))
        #expect(leaf.certificate.facts.subject == "")
        #expect(leaf.certificate.facts.profile?.dnsNames == [long])
        let path = ca.scratch.file("long.pem")
        try Data(leaf.certificate.pem).write(to: URL(fileURLWithPath: path))
        let verdict = try ChainVerifiers.openSSL(root: ca.file("root.pem"), intermediate: ca.file("issuing.pem"), leaf: path, host: long)
        #expect(verdict.accepted, "\(verdict.output)")
    }

    @Test("leaves are cached per host: the same object and serial until a day before expiry, then a new one")
    func cachedUntilRenewal() throws {
        let ca = try TestCA(names: ["example.com"])
        let host = try Self.host("api.example.com")
        let start = Date()
        let first = try ca.authority.leaf(for: host, now: start)
        let again = try ca.authority.leaf(for: host, now: start.addingTimeInterval(5 * 86_400))
        #expect(again === first)
        #expect(again.serialNumber == first.serialNumber)
        let other = try ca.authority.leaf(for: try Self.host("www.example.com"), now: start)
        #expect(other !== first)
        // 6 days after: 23 hours left, under the one-day floor.
        let renewed = try ca.authority.leaf(for: host, now: start.addingTimeInterval(6 * 86_400))
        #expect(renewed !== first)
        #expect(renewed.serialNumber != first.serialNumber)
        #expect(try ca.authority.leaf(for: host, now: start.addingTimeInterval(6 * 86_400 + 60)) === renewed)
        #expect(ca.authority.cachedLeafCount == 2)
    }

    @Test("a new CA generation has its own cache: the same host gets a new leaf under the new issuing certificate")
    func newGenerationNewLeaf() throws {
        let ca = try TestCA(names: ["example.com"])
        let host = try Self.host("api.example.com")
        let first = try ca.authority.leaf(for: host)
        let next = try InterceptionAuthority.create(in: ca.directory, for: InterceptionScope(names: ["example.com", "example.org"]))
        #expect(next.fingerprint != ca.authority.fingerprint)
        let second = try next.leaf(for: host)
        #expect(second !== first)
        #expect(second.certificate.facts.issuer == next.issuing.facts.subject)
        #expect(second.certificate.facts.issuer != first.certificate.facts.issuer)
    }

    @Test("no leaf outside the CA's names, and none for an IP literal", arguments: ["example.net", "badexample.com", "com", "127.0.0.1", "::1"])
    func refused(text: String) throws {
        let ca = try TestCA(names: ["example.com"])
        let host = try Self.host(text)
        let error = try #require(throws: InterceptionAuthority.LeafRefusal.self) { try ca.authority.leaf(for: host) }
        #expect(error == (host.isIPAddress ? .ipLiteral(host) : .outsideScope(host)))
        #expect(ca.authority.cachedLeafCount == 0)
    }

    @Test("loops minting the same host at once all get the one leaf that was stored")
    func concurrentMinting() throws {
        let ca = try TestCA(names: ["example.com"])
        let host = try Self.host("api.example.com")
        let authority = ca.authority
        let serials = Locked<Set<[UInt8]>>([])
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            if let leaf = try? authority.leaf(for: host) { serials.withLock { _ = $0.insert(leaf.serialNumber) } }
        }
        let final = try ca.authority.leaf(for: host)
        #expect(serials.withLock { $0 } == [final.serialNumber])
    }

    @Test("the cache is bounded: when full of fresh leaves it starts over")
    func boundedCache() throws {
        let cache = LeafCache(capacity: 3)
        let ca = try TestCA(names: ["example.com"])
        for index in 0..<4 {
            let host = try Self.host("h\(index).example.com")
            _ = try cache.leaf(for: host, isFresh: { _ in true }, mint: { try ca.authority.leafIssuer.mint(for: host, at: Date()) })
        }
        #expect(cache.count == 1)
    }
}
