import Foundation
import Testing
@testable import PinproxyRuntime

extension DesyncSuites {
    /// The differential sweep of issue 12: every shape of `SmugglingCorpus` goes
    /// through pinproxy to the recording origin, and for each one
    ///
    /// - the origin parsed (leniently, as real origins do) exactly the requests
    ///   pinproxy's own parser accepts from those bytes, with the same body
    ///   lengths, and nothing of a message pinproxy refuses (not even its head:
    ///   body bytes that came with the head are checked before it goes upstream);
    /// - pinproxy answered every forwarded request and refused with the status its
    ///   parser gives;
    /// - the bytes the origin received on each connection the case used, read
    ///   again with pinproxy's strict parser, are exactly what the origin read;
    /// - a second client's request afterwards gets its own answer.
    @Suite("Differential sweep: what the origin parses is what pinproxy accepted")
    struct DifferentialSweepTests {
        @Test("every corpus shape is forwarded exactly as parsed, or refused with nothing upstream")
        func sweep() throws {
            let bed = SmugglingBed.shared
            let corpus = SmugglingCorpus.cases(numberedFrom: bed.nextNumber() * 1000)
            var tally: [String: (tried: Int, refused: Int, forwarded: Int)] = [:]
            for testCase in corpus {
                let label = "\(testCase.family) / \(testCase.name)"
                let expected = RequestStream(testCase.bytes, routes: true)
                let marker = Self.marker(in: testCase.bytes)
                let responses = try bed.send(testCase.bytes)

                // pinproxy's answers: one 200 per forwarded request, then the refusal (if any).
                #expect(responses.prefix(expected.requests.count).allSatisfy { $0.status == 200 },
                        "\(label): \(responses.map(\.status))")
                if case let .refused(status) = expected.ending {
                    #expect(responses.count == expected.requests.count + 1 && responses.last?.status == status,
                            "\(label): expected \(expected.requests.count) × 200 then \(status), got \(responses.map(\.status))")
                } else {
                    #expect(responses.count == expected.requests.count, "\(label): \(responses.map(\.status))")
                }

                // What the origin parsed is what pinproxy's parser accepted.
                if let marker {
                    let parsed = bed.origin.requests(containing: marker)
                    let seen = parsed.map { RequestStream.Request(method: $0.method ?? "", target: $0.target ?? "",
                                                                  bodyLength: $0.body_length ?? -1) }
                    #expect(seen == expected.requests, "\(label): origin parsed \(seen), pinproxy accepted \(expected.requests)")
                    let heads = bed.origin.events().filter { $0.event == "head" && ($0.target ?? "").contains(marker) }
                    #expect(heads.count == expected.requests.count || expected.ending == .incomplete,
                            "\(label): \(heads.count) heads reached the origin for \(expected.requests.count) accepted requests")
                    // The same bytes, read strictly, give the same requests on every connection used.
                    for conn in Set(parsed.map(\.conn)) {
                        let strict = RequestStream(bed.origin.rawBytes(of: conn), routes: false)
                        let lenient = bed.origin.events().filter { $0.event == "request" && $0.conn == conn }
                            .map { RequestStream.Request(method: $0.method ?? "", target: $0.target ?? "", bodyLength: $0.body_length ?? -1) }
                        var refusedStrictly = false
                        if case .refused = strict.ending { refusedStrictly = true }
                        #expect(strict.requests == lenient && !refusedStrictly,
                                "\(label): connection \(conn) read strictly \(strict.requests) (\(strict.ending)), leniently \(lenient)")
                    }
                }

                // Nothing was left behind for the next client.
                let canaryTarget = "/canary-\(bed.nextNumber())"
                let canary = try bed.get(canaryTarget)
                #expect(canary?.json["target"] as? String == canaryTarget, "\(label): the next client got \(canary?.bodyText ?? "nothing")")

                var count = tally[testCase.family] ?? (0, 0, 0)
                count.tried += 1
                if expected.requests.isEmpty { count.refused += 1 } else { count.forwarded += 1 }
                tally[testCase.family] = count
            }
            let lines = tally.keys.sorted().map { family in
                let count = tally[family]!
                return "  \(family): \(count.tried) tried, \(count.refused) refused, \(count.forwarded) forwarded"
            }
            print("differential sweep, \(corpus.count) shapes:\n" + lines.joined(separator: "\n"))
        }

        /// The `/case-<n>` marker of a corpus case, if its target kept it.
        static func marker(in bytes: [UInt8]) -> String? {
            let text = String(decoding: bytes, as: UTF8.self)
            guard let range = text.range(of: "/case-[0-9]+", options: .regularExpression) else { return nil }
            return String(text[range])
        }
    }
}
