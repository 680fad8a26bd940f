import COpenSSL
import Foundation
import Testing
@testable import PinproxyRuntime

/// `TrustStore.contentDigest(directories:)`: what a reload compares to keep
/// pooled connections (ActiveConfiguration.verifiesAlike).
@Suite("TrustStore content digest")
struct TrustStoreDigestTests {
    @Test("a missing default directory trusts nothing, like an empty one; a certificate in it changes the digest")
    func missingDirectoryIsEmpty() throws {
        let store = try TrustStore.anchors([try TestPKI.chain().root.certificate])
        let directory = try TemporaryDirectory()
        let empty = directory.file("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        let missing = directory.file("missing")

        let none = try #require(store.contentDigest(directories: []))
        #expect(store.contentDigest(directories: [missing]) == none)
        #expect(store.contentDigest(directories: [empty]) == none)

        let root = try TestPKI.chain().root.certificate
        try directory.write(TestPKI.pem(root), to: "empty/\(Self.hashedName(root)).0")
        let filled = try #require(store.contentDigest(directories: [empty]))
        #expect(filled != none)
    }

    @Test("only the files OpenSSL's hashed lookup can open count: a bundle or a named link beside them changes nothing")
    func onlyLookupNamesCount() throws {
        let store = try TrustStore.anchors([])
        let directory = try TemporaryDirectory()
        let certs = directory.file("certs")
        try FileManager.default.createDirectory(atPath: certs, withIntermediateDirectories: false)
        let root = try TestPKI.chain().root.certificate
        let hashed = Self.hashedName(root)
        try directory.write(TestPKI.pem(root), to: "certs/\(hashed).0")
        let before = try #require(store.contentDigest(directories: [certs]))

        for ignored in ["ca-certificates.crt", "Example_Root.pem", "\(hashed).pem", "ABCDEF01.0", "\(hashed).", "\(hashed).r", "\(hashed).0x"] {
            try directory.write(TestPKI.pem(root), to: "certs/\(ignored)")
            #expect(store.contentDigest(directories: [certs]) == before, "\(ignored)")
        }
        for counted in ["\(hashed).1", "\(hashed).r0"] {
            try directory.write(TestPKI.pem(root), to: "certs/\(counted)")
            #expect(store.contentDigest(directories: [certs]) != before, "\(counted)")
            try FileManager.default.removeItem(atPath: directory.file("certs/\(counted)"))
        }
    }

    @Test("lookup names are the subject hash, a dot, and a sequence number, r-prefixed for CRLs")
    func lookupNames() {
        for name in ["002c0b4f.0", "002c0b4f.12", "deadbeef.r0", "00000000.r10"] { #expect(TrustStore.isLookupName(name), "\(name)") }
        for name in ["002c0b4f", "002c0b4f.", "002c0b4f.r", "002C0B4F.0", "02c0b4f.0", "002c0b4fa.0", "002c0b4f.0.pem",
                     "ca-certificates.crt", "g02c0b4f.0", "002c0b4f.-1", "002c0b4f.rr0"] {
            #expect(!TrustStore.isLookupName(name), "\(name)")
        }
    }

    /// The name OpenSSL's hashed lookup gives `certificate`'s subject, without the sequence number.
    static func hashedName(_ certificate: X509Certificate) -> String {
        String(format: "%08lx", X509_subject_name_hash(certificate.pointer))
    }

    @Test("a path that exists and is not a readable directory makes the digest unknown")
    func unreadableDirectoryIsUnknown() throws {
        let store = try TrustStore.anchors([])
        let directory = try TemporaryDirectory()
        let file = try directory.write("not a directory", to: "file")
        #expect(store.contentDigest(directories: [file]) == nil)
    }
}
