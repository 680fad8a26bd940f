import Foundation
import Testing
@testable import PinproxyRuntime

/// A `/metrics` body read as the Prometheus text format: every line a
/// comment or one sample `name{labels} value`, samples by their series text
/// (pinproxy writes labels sorted, so a series has one spelling).
struct MetricsScrape {
    let samples: [String: Double]
    let malformed: [String]

    init(_ text: String) {
        var samples: [String: Double] = [:]
        var malformed: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") { continue }
            let pattern = /^(pinproxy_[a-z_]+(?:\{[a-z_]+="(?:[^"\\]|\\.)*"(?:,[a-z_]+="(?:[^"\\]|\\.)*")*\})?) (-?[0-9]+(?:\.[0-9]+)?)$/
            guard let match = try? pattern.wholeMatch(in: String(line)), let value = Double(match.output.2) else {
                malformed.append(String(line))
                continue
            }
            samples[String(match.output.1)] = value
        }
        self.samples = samples
        self.malformed = malformed
    }

    /// The value of `name` with `labels`; nil when the series is not there.
    subscript(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        let rendered = labels.isEmpty ? name
            : name + "{" + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\($0.value)\"" }.joined(separator: ",") + "}"
        return samples[rendered]
    }

    static func fetch(_ address: String) throws -> MetricsScrape {
        let result = try Curl.run(["http://\(address)/metrics"])
        #expect(result.status == 200)
        #expect(result.header("content-type") == "text/plain; version=0.0.4; charset=utf-8")
        return MetricsScrape(result.bodyText)
    }
}
