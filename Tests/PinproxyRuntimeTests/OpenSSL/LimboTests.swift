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
    let crls: [String]
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

    /// Why a listed divergence is right (the prefix of its reason):
    /// - `cn-only`: the only defect is in the subject CN, which pinproxy never reads;
    /// - `pedantic-serial`: a serial-number encoding rule no browser checks;
    /// - `browsers-accept`: Chrome and Firefox accept the chain, and refusing it would break real sites or Debian roots;
    /// - `stricter`: pinproxy refuses a chain the suite accepts, for a rule a browser or rustls-webpki also applies;
    /// - `openssl-path-building`: OpenSSL 3.0 builds one path and does not backtrack (a rejection, never an acceptance).
    static let categories = ["cn-only", "pedantic-serial", "browsers-accept", "stricter", "openssl-path-building"]

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures").path

    /// The public suffix list the daemon reads, loaded once for every case
    /// (nil when Debian's publicsuffix package is missing: `make test` installs it).
    private static let loadedSuffixes = try? PublicSuffixList(contentsOf: PublicSuffixList.debianPath)

    static func publicSuffixes() throws -> PublicSuffixList {
        try #require(loadedSuffixes, "\(PublicSuffixList.debianPath) is missing: install Debian's publicsuffix package")
    }

    /// Runs the case as `pinproxy probe --chain` and the handshake do
    /// (`OfflineHandshake`): an `anchors` policy over the case's trusted
    /// certificates and CRLs (`crl_files`), its security level and
    /// verification parameters from the policy's own `SSL_CTX`, every extra
    /// check of SPEC §2.3, at the case's validation time. Says whether the
    /// policy lets the request through; a CRL that `crl_files` refuses to
    /// load (so the daemon would not start) accepts nothing.
    func isAccepted() throws -> Bool {
        let directory = try TemporaryDirectory()
        let untrusted = try untrusted_intermediates.flatMap {
            try X509Certificate.parse(Array($0.utf8), source: "\(id) intermediate")
        }
        let leaf = try #require(try X509Certificate.parse(Array(peer_certificate.utf8), source: "\(id) peer").first)
        var host = HostName("limbo.invalid")!
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
        let anchors = trusted_certs.isEmpty ? [] : [try directory.write(trusted_certs.joined(separator: "\n"), to: "anchors.pem")]
        let crlFiles = try crls.enumerated().map { try directory.write($0.element, to: "crl\($0.offset).pem") }
        let policy = TrustPolicy(kind: .anchors, anchorFiles: anchors, validateHost: expected_peer_name != nil,
                                 crlFiles: crlFiles)
        let prepared: PreparedPolicy
        do {
            prepared = try PreparedPolicy(ruleName: "limbo", policy: policy, trustStore: try TrustStore.anchors([]),
                                          publicSuffixes: try Self.publicSuffixes())
        } catch let error as FileLoadError where crlFiles.contains(error.path) {
            return false
        }
        let verdict = try OfflineHandshake.evaluate([leaf] + untrusted, host: host, port: 443, policy: prepared,
                                                    at: time, maxDepth: max_chain_depth)
        return verdict.decision.permitsRelay
    }
}

@Suite("x509-limbo")
struct LimboTests {
    @Test("the fixture holds the SERVER cases and every listed divergence names one of them, with a reason category")
    func fixtureIsComplete() {
        #expect(LimboCase.serverCases.count == 198)
        let ids = Set(LimboCase.serverCases.map(\.id))
        #expect(LimboCase.expectedDivergences.keys.filter { !ids.contains($0) }.sorted() == [])
        let categories = LimboCase.categories.map { "[\($0)]" }
        #expect(LimboCase.expectedDivergences.filter { entry in !categories.contains { entry.value.hasPrefix($0) } }
                    .keys.sorted() == [])
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
