import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

@Suite("SignatureCheckCache")
struct SignatureCheckCacheTests {
    @Test("a pair is verified once and then answered from memory, true or false")
    func remembersAnswers() {
        let cache = SignatureCheckCache(capacity: 8)
        var calls = 0
        for _ in 0..<3 {
            #expect(cache.verifies(child: [1], issuer: [2]) { calls += 1; return true })
            #expect(!cache.verifies(child: [2], issuer: [1]) { calls += 1; return false })
        }
        #expect(calls == 2)
    }

    @Test("it never holds more than its capacity")
    func bounded() {
        let cache = SignatureCheckCache(capacity: 4)
        for index in 0..<10 { _ = cache.verifies(child: [UInt8(index)], issuer: [0]) { true } }
        #expect(cache.count <= 4)
        #expect(cache.count >= 1)
    }

    @Test("an impostor issuer with the same name is not taken for the real one after the real one was seen")
    func impostorAfterRealIssuer() throws {
        let real = try TestPKI.chain()
        let impostor = try TestPKI.chain()  // same names, other keys
        let host = try #require(HostName("api.example.com"))
        let store = try TrustStore.anchors([real.root.certificate])
        let genuine = PeerChainBuilder.build(leaf: real.served[0], untrusted: [real.served[1]], store: store,
                                             host: host, at: nil, pinnedCertificates: [])
        #expect(genuine.signingPath.count == 2)
        let forged = PeerChainBuilder.build(leaf: real.served[0], untrusted: [impostor.served[1]], store: store,
                                            host: host, at: nil, pinnedCertificates: [])
        #expect(forged.served[1].subject == genuine.served[1].subject)
        #expect(forged.signingPath.map(\.certificateSHA256) == [genuine.served[0].certificateSHA256])
        #expect(forged.chainFailure != nil)
    }
}
