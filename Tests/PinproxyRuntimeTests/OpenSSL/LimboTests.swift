import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// One x509-limbo test case (only the fields a SERVER validation uses).
struct LimboCase: Decodable, Sendable, CustomTestStringConvertible {
    struct PeerName: Decodable, Sendable {
        let kind: String
        let value: String
    }

    let id: String
    let validation_kind: String
    let trusted_certs: [String]
    let untrusted_intermediates: [String]
    let peer_certificate: String
    let validation_time: String?
    let expected_peer_name: PeerName?
    let max_chain_depth: Int?
    let expected_result: String

    var testDescription: String { id }

    /// The SERVER cases of Fixtures/limbo.json, located next to this source file.
    static let serverCases: [LimboCase] = {
        struct File: Decodable { let testcases: [LimboCase] }
        guard let data = FileManager.default.contents(atPath: fixtures + "/limbo.json"),
              let file = try? JSONDecoder().decode(File.self, from: data) else { return [] }
        return file.testcases.filter { $0.validation_kind == "SERVER" }
    }()

    /// Known divergences: case id → why pinproxy's verification differs.
    static let expectedDivergences: [String: String] = {
        guard let data = FileManager.default.contents(atPath: fixtures + "/limbo-expectations.json"),
              let table = try? JSONDecoder().decode([String: String].self, from: data) else { return [:] }
        return table
    }()

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures").path

    /// Runs the case through `PeerChainBuilder` and says whether the peer is accepted.
    func isAccepted() throws -> Bool {
        let trusted = try trusted_certs.flatMap { try X509Certificate.parse(Array($0.utf8), source: "\(id) trusted") }
        let untrusted = try untrusted_intermediates.flatMap {
            try X509Certificate.parse(Array($0.utf8), source: "\(id) intermediate")
        }
        let leaf = try #require(try X509Certificate.parse(Array(peer_certificate.utf8), source: "\(id) peer").first)
        var host: HostName?
        if let name = expected_peer_name {
            // A name pinproxy could never connect to cannot match either.
            guard name.kind == "DNS" || name.kind == "IP", let parsed = HostName(name.value) else { return false }
            host = parsed
        }
        let time = try validation_time.map { text in
            let fractional = ISO8601DateFormatter()
            fractional.formatOptions.insert(.withFractionalSeconds)
            return try #require(ISO8601DateFormatter().date(from: text) ?? fractional.date(from: text),
                                "validation_time \(text)")
        }
        let chain = PeerChainBuilder.build(leaf: leaf, untrusted: untrusted, store: try TrustStore.anchors(trusted),
                                           host: host, at: time, pinnedCertificates: [], maxDepth: max_chain_depth)
        return chain.chainFailure == nil && (host == nil || chain.hostMatches)
    }
}

@Suite("x509-limbo")
struct LimboTests {
    @Test("the fixture holds the SERVER cases and every listed divergence names one of them")
    func fixtureIsComplete() {
        #expect(LimboCase.serverCases.count == 198)
        let ids = Set(LimboCase.serverCases.map(\.id))
        #expect(LimboCase.expectedDivergences.keys.filter { !ids.contains($0) }.sorted() == [])
    }

    @Test("each SERVER case gets its expected result, or is a listed divergence", arguments: LimboCase.serverCases)
    func serverCase(_ limbo: LimboCase) throws {
        let accepted = try limbo.isAccepted()
        let agrees = accepted == (limbo.expected_result == "SUCCESS")
        if let reason = LimboCase.expectedDivergences[limbo.id] {
            #expect(!agrees, "listed divergence now agrees, remove it from limbo-expectations.json: \(reason)")
        } else {
            #expect(agrees, "LIMBO-DIVERGENCE \(limbo.id): accepted=\(accepted), expected \(limbo.expected_result)")
        }
    }
}
