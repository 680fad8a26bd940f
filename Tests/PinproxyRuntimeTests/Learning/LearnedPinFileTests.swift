import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// The learned-pins file on a real file system (SPEC §2.1): written 0600,
/// atomically, readable back; refused, naming the file and the fix, when
/// someone else could have changed it or when it does not parse.
@Suite("Learned pins: the file, its modes and its owner")
struct LearnedPinFileTests {
    static let pins = [SPKIPin(digest: [UInt8](repeating: 1, count: 32))!, SPKIPin(digest: [UInt8](repeating: 2, count: 32))!]
    static let document = LearnedPinsDocument(rules: ["api.example.com": LearnedPins(pins: pins, host: "api.example.com")])

    @Test("a written file is mode 0600, reads back as written, and leaves no temporary file")
    func writeAndRead() throws {
        let directory = try TemporaryDirectory()
        let file = LearnedPinFile(path: directory.file("learned-pins.json"))
        try file.write(Self.document)
        #expect(LearningBed.mode(of: file.path) == 0o600)
        #expect(try file.read() == Self.document)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["learned-pins.json"])
        // Replacing it is a rename: a reader holding the old file keeps reading the old one whole.
        let old = open(file.path, O_RDONLY)
        defer { close(old) }
        try file.write(LearnedPinsDocument())
        #expect(try file.read() == LearnedPinsDocument())
        var status = stat()
        #expect(fstat(old, &status) == 0 && status.st_size == Int(Self.document.text.utf8.count))
    }

    @Test("a missing file is an empty one; a relative path is made absolute for the messages")
    func missingFile() throws {
        let directory = try TemporaryDirectory()
        #expect(try LearnedPinFile(path: directory.file("learned-pins.json")).read() == LearnedPinsDocument())
        #expect(LearnedPinFile(path: "./learned-pins.json").path == FileManager.default.currentDirectoryPath + "/learned-pins.json")
    }

    /// Ways the file can be untrustworthy, each with what the error must say.
    enum Unusable: String, CaseIterable, Sendable {
        case groupWritable, worldWritable, symbolicLink, malformed, badPin, openDirectory

        /// Makes the file (or its directory) so; returns the path the error must name and a phrase it must hold.
        func make(in directory: TemporaryDirectory) throws -> (path: String, phrase: String) {
            let path = directory.file("learned-pins.json")
            let good = LearnedPinFileTests.document.text
            switch self {
            case .groupWritable, .worldWritable:
                try good.write(toFile: path, atomically: false, encoding: .utf8)
                chmod(path, self == .groupWritable ? 0o620 : 0o602)
                return (path, "run `chmod 600 \(path)`")
            case .symbolicLink:
                let target = try directory.write(good, to: "elsewhere.json")
                symlink(target, path)
                return (path, "is a symbolic link")
            case .malformed:
                try "{ \"rules\": { \"api.example.com\": ".write(toFile: path, atomically: false, encoding: .utf8)
                chmod(path, 0o600)
                return (path, "is not a valid learned-pins file")
            case .badPin:
                try #"{ "rules": { "api.example.com": { "pins": ["sha256/short"] } } }"#
                    .write(toFile: path, atomically: false, encoding: .utf8)
                chmod(path, 0o600)
                return (path, #"$.rules["api.example.com"].pins[0]"#)
            case .openDirectory:
                try good.write(toFile: path, atomically: false, encoding: .utf8)
                chmod(path, 0o600)
                chmod(directory.path, 0o777)
                return (directory.path, "run `chmod go-w \(directory.path)`")
            }
        }
    }

    @Test("a file others could have changed, or that does not parse, is refused naming it and the fix",
          arguments: Unusable.allCases)
    func refused(unusable: Unusable) throws {
        let directory = try TemporaryDirectory()
        let (path, phrase) = try unusable.make(in: directory)
        defer { chmod(directory.path, 0o700) }
        #expect(throws: LearnedPinFileError.self) { try LearnedPinFile(path: directory.file("learned-pins.json")).read() }
        do {
            _ = try LearnedPinFile(path: directory.file("learned-pins.json")).read()
        } catch {
            #expect(error.path == path)
            #expect(error.description.contains(phrase), "\(error)")
        }
    }

    @Test("a sticky world-writable directory (as /tmp) is accepted: others cannot rename over a file they do not own")
    func stickyDirectory() throws {
        let directory = try TemporaryDirectory()
        chmod(directory.path, 0o1777)
        defer { chmod(directory.path, 0o700) }
        let file = LearnedPinFile(path: directory.file("learned-pins.json"))
        try file.write(Self.document)
        #expect(try file.read() == Self.document)
    }

    @Test("a state directory that does not exist is refused before anything is learned, naming it and STATE_DIRECTORY")
    func missingDirectory() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.file("state")
        do {
            try LearnedPinFile(path: missing + "/learned-pins.json").checkWritable()
            Issue.record("a missing directory was accepted")
        } catch {
            #expect(error.path == missing)
            #expect(error.description.contains("STATE_DIRECTORY"))
        }
    }

    @Test("a file another user owns is refused; under root, one the state directory's owner wrote is read (DynamicUser)",
          .enabled(if: geteuid() == 0, "chown needs root"))
    func ownership() throws {
        let directory = try TemporaryDirectory()
        let file = LearnedPinFile(path: directory.file("learned-pins.json"))
        try file.write(Self.document)
        #expect(chown(file.path, 4242, 4242) == 0)
        do {
            _ = try file.read()
            Issue.record("a file of uid 4242 was read")
        } catch {
            #expect(error.description.contains("is owned by uid 4242"), "\(error)")
        }
        #expect(chown(directory.path, 4242, 4242) == 0)
        #expect(try file.read() == Self.document)
    }
}
