import Foundation
import PinproxyCore
@testable import PinproxyRuntime

/// The setting of the learning tests (SPEC §2.1 `"pins": "learn"`): one
/// directory with a state directory in it (`STATE_DIRECTORY`, where
/// `learned-pins.json` goes), a real chain for api.example.com and an
/// attacker's chain for the same name from a second root, both roots in the
/// trust store, so that only learned pins tell the two servers apart.
///
/// Worlds made from the bed share its directory, trust store and state
/// directory: a second world is pinproxy started again on what the first learned.
final class LearningBed {
    static let rule = "api.example.com"
    /// The learning rule, as a `hosts` section.
    static let hosts = #""hosts": { "api.example.com": { "policy": "pin-public-keys", "pins": "learn" } },"#

    let directory: TemporaryDirectory
    let stateDirectory: String
    let real: TestPKI.Chain
    let attacker: TestPKI.Chain
    let trustStore: String

    init() throws {
        directory = try TemporaryDirectory()
        stateDirectory = directory.file("state")
        // systemd creates StateDirectory= with mode 0700.
        guard mkdir(stateDirectory, 0o700) == 0 else { throw TestFailure("mkdir \(stateDirectory): \(errno)") }
        real = try TestPKI.chain(rootName: "Real Root CA")
        attacker = try TestPKI.chain(rootName: "Attacker Root CA")
        trustStore = try directory.pemFile([real.root.certificate, attacker.root.certificate])
    }

    /// What pinproxy reads instead of the test runner's environment.
    var environment: [String: String] { ["STATE_DIRECTORY": stateDirectory] }
    var file: String { stateDirectory + "/" + LearnedPins.fileName }

    /// A world in the bed: the real chain as its PKI, the bed's trust store,
    /// the learning rule (plus `extra`), `threads` event loops.
    func world(threads: Int = 1, extra: String = "") throws -> TestWorld {
        let world = try TestWorld(directory: directory, chain: real)
        world.configuration.trustStore = trustStore
        world.configuration.threads = threads
        world.configuration.extra = Self.hosts + extra
        return world
    }

    /// Starts the attacker's server (leaf and intermediate of `attacker`) resolved for `authorities`.
    @discardableResult
    func startAttacker(in world: TestWorld, resolving authorities: [String] = [TestWorld.apiAuthority]) throws -> TestUpstream {
        try world.startUpstream(serving: attacker.served, key: attacker.leaf.key, resolving: authorities)
    }

    /// The file as pinproxy reads it (modes and owner checked).
    func learned() throws -> LearnedPinsDocument {
        try LearnedPinFile(path: file).read()
    }

    /// The file's entry for the rule, once it is there (the write is off the
    /// event loop, so it may land just after the response).
    func waitForLearned(rule: String = rule) throws -> LearnedPins? {
        try eventually(timeout: 5, { try learned().rules[rule] }, until: { $0 != nil })
    }

    /// `sha256/…` of the keys pinproxy learns from `chain`: the leaf's, then its issuer's.
    static func pins(of chain: TestPKI.Chain) -> [String] {
        [UpstreamPKI.pin(chain.leaf.certificate), UpstreamPKI.pin(chain.intermediate.certificate)]
    }

    /// The permission bits of `path`.
    static func mode(of path: String) -> mode_t? {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mode & 0o7777 : nil
    }
}
