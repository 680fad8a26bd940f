import Foundation
@testable import PinproxyCore

/// A temporary directory holding the files a configuration names (their
/// content is irrelevant to PinproxyCore: it only checks they are readable),
/// and helpers to parse configuration text with a fixed clock.
struct ConfigurationFixture {
    let directory: String

    /// 2026-11-30T12:00:00Z, the reference "now" for expiry warnings.
    static let now = Date(timeIntervalSince1970: 1_796_040_000)

    init(files: [String] = ["trust.pem", "cdn.pem", "corp-root.pem", "backup.pem", "client.pem", "client.key"]) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("pinproxy-config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for file in files {
            try Data("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n".utf8)
                .write(to: URL(fileURLWithPath: path(file)))
        }
    }

    func path(_ file: String) -> String { directory + "/" + file }

    /// Replaces `@name` in `text` with the fixture's path of `name`.
    func resolve(_ text: String) -> String {
        text.replacingOccurrences(of: "@", with: directory + "/")
    }

    func parse(_ text: String, environment: [String: String] = [:], cpuCount: Int = 4)
        throws(ConfigurationError) -> (Configuration, [ConfigurationWarning]) {
        try ConfigurationLoader.parse(text: resolve(text), source: "<text>", environment: environment,
                                      cpuCount: cpuCount, now: Self.now)
    }

    /// The problems of a configuration expected to be invalid (empty when it is valid).
    func problems(_ text: String) -> [ConfigurationProblem] {
        do {
            _ = try parse(text)
            return []
        } catch {
            return error.problems
        }
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
