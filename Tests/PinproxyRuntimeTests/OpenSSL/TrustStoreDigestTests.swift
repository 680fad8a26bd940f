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

        try directory.write(TestPKI.pem(try TestPKI.chain().root.certificate), to: "empty/root.pem")
        let filled = try #require(store.contentDigest(directories: [empty]))
        #expect(filled != none)
    }

    @Test("a path that exists and is not a readable directory makes the digest unknown")
    func unreadableDirectoryIsUnknown() throws {
        let store = try TrustStore.anchors([])
        let directory = try TemporaryDirectory()
        let file = try directory.write("not a directory", to: "file")
        #expect(store.contentDigest(directories: [file]) == nil)
    }
}
