import Foundation
import PinproxyCore
@testable import PinproxyRuntime
import Testing

/// `pinproxy ca init`'s material and the rules loading enforces (SPEC §3.1).
@Suite("interception CA: creation and loading")
struct InterceptionCACreationTests {
    static let names = ["api.example.com", "example.org", "git.example.net"]

    @Test("root and issuing certificate both carry critical name constraints: exactly the scope's DNS names, every IP excluded")
    func constraintsReadBack() throws {
        let ca = try TestCA(names: Self.names)
        for certificate in [ca.authority.root, ca.authority.issuing] {
            let constraints = try #require(certificate.nameConstraintSubtrees)
            #expect(constraints.isCritical)
            #expect(constraints.permitted == Self.names.sorted().map { .dns($0) })
            #expect(constraints.excluded == [.ipRange([UInt8](repeating: 0, count: 8)), .ipRange([UInt8](repeating: 0, count: 32))])
            #expect(!constraints.hasDistanceBounds)
        }
    }

    @Test("openssl x509 -text, an independent parser, shows the same constraints, basic constraints and key usage on both")
    func constraintsUnderOpenSSLText() throws {
        let ca = try TestCA(names: Self.names)
        let root = try ChildProcess.run("/usr/bin/openssl", ["x509", "-noout", "-text", "-in", ca.file("root.pem")])
        let issuing = try ChildProcess.run("/usr/bin/openssl", ["x509", "-noout", "-text", "-in", ca.file("issuing.pem")])
        for (text, pathLength) in [(root.output, "1"), (issuing.output, "0")] {
            let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            let start = try #require(lines.firstIndex(of: "X509v3 Name Constraints: critical"))
            #expect(Array(lines[(start + 1)...(start + 7)]) == [
                "Permitted:", "DNS:api.example.com", "DNS:example.org", "DNS:git.example.net",
                "Excluded:", "IP:0.0.0.0/0.0.0.0", "IP:0:0:0:0:0:0:0:0/0:0:0:0:0:0:0:0",
            ])
            #expect(lines.contains("X509v3 Basic Constraints: critical"))
            #expect(lines.contains("CA:TRUE, pathlen:\(pathLength)"))
            #expect(lines.contains("X509v3 Key Usage: critical"))
            #expect(lines.contains("Certificate Sign, CRL Sign"))
            #expect(lines.contains("Public-Key: (256 bit)"))
            #expect(lines.contains("ASN1 OID: prime256v1"))
            #expect(lines.contains("X509v3 Subject Key Identifier:"))
            #expect(lines.contains("X509v3 Authority Key Identifier:"))
        }
    }

    @Test("the scope is read back from the certificates: a loaded CA has the names it was created for")
    func scopeRoundTrips() throws {
        let ca = try TestCA(names: ["b.example.com", "A.example.com", "x.a.example.com"])
        let loaded = try InterceptionAuthority.load(directory: ca.directory)
        #expect(loaded.scope.names == ["a.example.com", "b.example.com"])
        #expect(loaded.scope == ca.authority.scope)
        #expect(loaded.fingerprint == ca.authority.fingerprint)
        #expect(loaded.fingerprint.count == 64)
        #expect(loaded.rootPEM.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
        #expect(loaded.rootPEM == (try String(contentsOfFile: ca.file("root.pem"), encoding: .utf8)))
        // Three years, give or take the backdating hour.
        let lifetime = loaded.notAfter.timeIntervalSinceNow
        #expect(abs(lifetime - 3 * 365 * 86_400) < 120)
    }

    @Test("the directory is 0700, the keys 0600, the certificates 0644; there is no root key")
    func fileModes() throws {
        let ca = try TestCA(names: Self.names)
        let files = try FileManager.default.contentsOfDirectory(atPath: ca.directory).sorted()
        #expect(files == ["issuing.key", "issuing.pem", "leaf.key", "root.pem"])
        #expect(FileManager.default.permissions(of: ca.directory) == 0o700)
        #expect(FileManager.default.permissions(of: ca.file("issuing.key")) == 0o600)
        #expect(FileManager.default.permissions(of: ca.file("leaf.key")) == 0o600)
        #expect(FileManager.default.permissions(of: ca.file("root.pem")) == 0o644)
        #expect(FileManager.default.permissions(of: ca.file("issuing.pem")) == 0o644)
    }


    @Test("loading refuses a key at 0644, naming the file, its mode and the chmod that fixes it", arguments: ["issuing.key", "leaf.key"])
    func looseKeyRefused(key: String) throws {
        let ca = try TestCA(names: Self.names)
        chmod(ca.file(key), 0o644)
        let error = try #require(throws: InterceptionCAError.self) { try InterceptionAuthority.load(directory: ca.directory) }
        #expect(error.kind == .permissions)
        #expect(error.path == ca.file(key))
        #expect(error.description.contains("permissions 0644 are too open"))
        #expect(error.description.contains("run `chmod 600 \(ca.file(key))`"))
    }

    @Test("loading refuses a directory at 0755 and names the chmod")
    func looseDirectoryRefused() throws {
        let ca = try TestCA(names: Self.names)
        chmod(ca.directory, 0o755)
        let error = try #require(throws: InterceptionCAError.self) { try InterceptionAuthority.load(directory: ca.directory) }
        #expect(error.kind == .permissions)
        #expect(error.description == "\(ca.directory): permissions 0755 are too open: the CA's keys must not be reachable by group or other; run `chmod 700 \(ca.directory)`")
    }

    @Test("loading refuses a key owned by another user", .enabled(if: geteuid() == 0, "needs root to chown a file to another user"))
    func foreignOwnerRefused() throws {
        let ca = try TestCA(names: Self.names)
        #expect(chown(ca.file("leaf.key"), 4321, 4321) == 0)
        let error = try #require(throws: InterceptionCAError.self) { try InterceptionAuthority.load(directory: ca.directory) }
        #expect(error.kind == .permissions)
        #expect(error.description.contains("is owned by uid 4321, not by uid 0 that runs pinproxy"))
    }

    @Test("run as root under a parent owned by another user (a DynamicUser StateDirectory), init hands directory and files to that user",
          .enabled(if: geteuid() == 0, "needs root to create files for another user"))
    func handoverToStateDirectoryOwner() throws {
        let scratch = try TemporaryDirectory()
        let state = scratch.file("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        #expect(chown(state, 61_234, 61_235) == 0)
        let directory = state + "/ca"
        _ = try InterceptionAuthority.create(in: directory, for: InterceptionScope(names: Self.names))
        for path in [directory] + ["root.pem", "issuing.pem", "issuing.key", "leaf.key"].map({ directory + "/" + $0 }) {
            var status = stat()
            #expect(stat(path, &status) == 0)
            #expect(status.st_uid == 61_234 && status.st_gid == 61_235, "\(path)")
        }
        // Root reads files of the user it handed them to.
        #expect(throws: Never.self) { try InterceptionAuthority.load(directory: directory) }
    }

    @Test("a missing CA names the command that creates it, with the config")
    func missingNamesInit() throws {
        let scratch = try TemporaryDirectory()
        let error = try #require(throws: InterceptionCAError.self) {
            try InterceptionAuthority.load(directory: scratch.file("absent"), configPath: "/etc/pinproxy/pinproxy.json")
        }
        #expect(error.kind == .missing)
        #expect(error.description.contains("run `pinproxy ca init --config /etc/pinproxy/pinproxy.json`"))
    }

    @Test("an issuing key that is not the issuing certificate's is refused")
    func mismatchedIssuingKey() throws {
        let first = try TestCA(names: Self.names)
        let second = try TestCA(names: Self.names)
        let key = try Data(contentsOf: URL(fileURLWithPath: second.file("issuing.key")))
        try key.write(to: URL(fileURLWithPath: first.file("issuing.key")))
        let error = try #require(throws: InterceptionCAError.self) { try InterceptionAuthority.load(directory: first.directory) }
        #expect(error.kind == .unusable)
        #expect(error.description.contains("is not the P-256 key of issuing.pem"))
    }

    @Test("an issuing certificate of another generation does not chain to this root")
    func mixedGenerations() throws {
        let first = try TestCA(names: Self.names)
        let second = try TestCA(names: Self.names)
        for name in ["issuing.pem", "issuing.key"] {
            try Data(contentsOf: URL(fileURLWithPath: second.file(name))).write(to: URL(fileURLWithPath: first.file(name)))
        }
        let error = try #require(throws: InterceptionCAError.self) { try InterceptionAuthority.load(directory: first.directory) }
        #expect(error.kind == .unusable)
        #expect(error.path == first.file("issuing.pem"))
        #expect(error.description.contains("is not a valid CA certificate under root.pem"))
    }

    @Test("an expired CA is refused at load")
    func expiredRefused() throws {
        let ca = try TestCA(names: Self.names, at: Date().addingTimeInterval(-4 * 365 * 86_400))
        let error = try #require(throws: InterceptionCAError.self) { try InterceptionAuthority.load(directory: ca.directory) }
        #expect(error.kind == .unusable)
        #expect(error.description.contains("certificate has expired"))
    }

    @Test("a CA for no names is never made: no permitted subtree would permit every name")
    func emptyScopeRefused() throws {
        let scratch = try TemporaryDirectory()
        #expect(throws: InterceptionCAError.self) {
            try InterceptionAuthority.create(in: scratch.file("ca"), for: InterceptionScope(names: []))
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.file("ca/root.pem")))
    }

    @Test("reloading the same files returns the same loaded generation (its leaf cache and ticket keys survive a reload)")
    func reloadReusesGeneration() throws {
        let ca = try TestCA(names: Self.names)
        let reloaded = try InterceptionAuthority.load(directory: ca.directory, reusing: ca.authority)
        #expect(reloaded === ca.authority)
        let other = try TestCA(names: Self.names)
        let fresh = try InterceptionAuthority.load(directory: other.directory, reusing: ca.authority)
        #expect(fresh !== ca.authority)
    }
}
