import Foundation

/// One parsed line of the violation log (SPEC §4), reduced to what
/// `pinproxy tail` shows and filters on. The raw line is kept so `--json`
/// prints exactly what the daemon wrote.
public struct ViolationLogRecord: Sendable, Hashable {
    /// The two kinds of line the daemon writes.
    public enum Kind: Sendable, Hashable {
        /// A full `pin_violation` event.
        case violation(leaf: ServedCertificate?, detail: String)
        /// A `pin_violation_summary`: `count` identical events past the burst
        /// were counted, not written, between `firstTime` and `lastTime`.
        case summary(count: Int, firstTime: Date, lastTime: Date)
    }

    /// The evidence of one `served_chain` entry that a readable line shows.
    public struct ServedCertificate: Sendable, Hashable {
        public var subject: String
        public var issuer: String
        /// `sha256/<base64>`.
        public var spki: String
    }

    public var time: Date
    /// `blocked` or `reported`, as written (unknown values are malformed).
    public var action: ViolationEvent.Action
    /// The `reason` as written; kept as text so a reason added by a newer
    /// daemon still displays.
    public var reason: String
    public var host: String
    public var port: Int
    public var rule: String
    public var kind: Kind
    /// The line as read, without its newline.
    public var rawLine: String

    /// Why a line is not a record: it names the first missing or mistyped field.
    public struct Malformed: Error, Sendable, Hashable, CustomStringConvertible {
        public var problem: String
        public var description: String { problem }
    }

    /// Parses one log line (without its newline).
    public static func parse(_ line: String) throws(Malformed) -> ViolationLogRecord {
        let fields: Fields
        do {
            fields = try JSONDecoder().decode(Fields.self, from: Data(line.utf8))
        } catch DecodingError.typeMismatch(_, let context) where !context.codingPath.isEmpty {
            throw Malformed(problem: "\"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" has the wrong type")
        } catch DecodingError.valueNotFound(_, let context) where !context.codingPath.isEmpty {
            throw Malformed(problem: "\"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" has the wrong type")
        } catch {
            throw Malformed(problem: "not a JSON object")
        }
        func required<Value>(_ value: Value?, _ key: String) throws(Malformed) -> Value {
            guard let value else { throw Malformed(problem: "no \"\(key)\"") }
            return value
        }
        func instant(_ text: String?, _ key: String) throws(Malformed) -> Date {
            guard let date = RFC3339TimestampParser.parse(try required(text, key)) else {
                throw Malformed(problem: "\"\(key)\" is not an RFC 3339 time")
            }
            return date
        }
        let event = try required(fields.event, "event")
        guard let action = ViolationEvent.Action(rawValue: try required(fields.action, "action")) else {
            throw Malformed(problem: "\"action\" is neither blocked nor reported")
        }
        let time = try instant(fields.time, "time")
        let kind: Kind
        switch event {
        case ViolationEvent.eventName:
            let leaf = fields.servedChain?.first.map {
                ServedCertificate(subject: $0.subject, issuer: $0.issuer, spki: $0.spkiSHA256)
            }
            kind = .violation(leaf: leaf, detail: fields.detail ?? "")
        case summaryEventName:
            kind = .summary(count: try required(fields.count, "count"),
                            firstTime: try instant(fields.firstTime, "first_time"),
                            lastTime: try instant(fields.lastTime, "last_time"))
        default:
            throw Malformed(problem: "unknown event \"\(event)\"")
        }
        return ViolationLogRecord(time: time, action: action, reason: try required(fields.reason, "reason"),
                                  host: try required(fields.host, "host"), port: try required(fields.port, "port"),
                                  rule: try required(fields.rule, "rule"), kind: kind, rawLine: line)
    }

    /// The subset of a log line that `tail` reads; every other key is ignored,
    /// so lines from a newer daemon with more fields still display.
    private struct Fields: Decodable {
        struct Certificate: Decodable {
            var subject: String
            var issuer: String
            var spkiSHA256: String
            enum CodingKeys: String, CodingKey {
                case subject, issuer
                case spkiSHA256 = "spki_sha256"
            }
        }
        var time: String?
        var event: String?
        var action: String?
        var reason: String?
        var host: String?
        var port: Int?
        var rule: String?
        var servedChain: [Certificate]?
        var detail: String?
        var count: Int?
        var firstTime: String?
        var lastTime: String?
        enum CodingKeys: String, CodingKey {
            case time, event, action, reason, host, port, rule, detail, count
            case servedChain = "served_chain"
            case firstTime = "first_time"
            case lastTime = "last_time"
        }
    }

    /// The `event` of a summary line (SPEC §4).
    public static let summaryEventName = "pin_violation_summary"
}
