/// `Max-Forwards` (RFC 9110 §7.6.2): how many more intermediaries a TRACE or
/// OPTIONS request may pass. Every intermediary must check and update it
/// before forwarding such a request; at zero it must not forward, and answers
/// as the final recipient instead. With any other method the field is relayed
/// as received (a recipient may ignore it there, and pinproxy does).
public enum MaxForwards {
    /// What a request's `Max-Forwards` asks of pinproxy.
    public enum Decision: Sendable, Hashable {
        /// Not TRACE or OPTIONS, or no `Max-Forwards` field: relay the head as received.
        case relayAsReceived
        /// Zero: pinproxy is the final recipient and answers itself.
        case answerHere
        /// Forward with this value (the received one less one).
        case forward(remaining: Int)
    }

    /// The largest value forwarded: a received value beyond it (the grammar
    /// sets no bound) is forwarded as this, "the lesser of the received value
    /// decremented by one or the largest value that the recipient supports".
    public static let largestForwarded = Int(Int32.max)

    /// The methods the field applies to. Every request asks, so the length
    /// settles most methods before a string comparison (some 30 instructions each).
    @inline(__always)
    public static func applies(to method: String) -> Bool {
        switch method.utf8.count {
        case 5: method == "TRACE"
        case 7: method == "OPTIONS"
        default: false
        }
    }

    /// The decision for `head`. A TRACE or OPTIONS whose field is not exactly
    /// one `1*DIGIT` value (a list, a repeated field, a sign, a blank) is
    /// refused with 400: pinproxy cannot tell how far the client meant it to go.
    public static func decide(_ head: HTTPRequestHead) -> Result<Decision, HTTPError> {
        guard applies(to: head.method) else { return .success(.relayAsReceived) }
        let values = head.fieldSection.values(named: "max-forwards")
        guard let value = values.first else { return .success(.relayAsReceived) }
        guard values.count == 1, let received = parse(value) else {
            return .failure(.badRequest("invalid max-forwards"))
        }
        return .success(received == 0 ? .answerHere : .forward(remaining: min(received - 1, largestForwarded)))
    }

    /// `1*DIGIT`, saturated at `largestForwarded + 1` (a longer run of digits
    /// is still a valid value, just a large one).
    static func parse(_ value: String) -> Int? {
        guard !value.isEmpty else { return nil }
        var result = 0
        for byte in value.utf8 {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            result = min(result * 10 + Int(byte - UInt8(ascii: "0")), largestForwarded + 1)
        }
        return result
    }

    /// True for a field line pinproxy rewrites when it forwards with a new value.
    static func isField(_ section: FieldSection, at index: Int) -> Bool {
        section.lines[index].known == .other && section.hasName(at: index, "max-forwards")
    }
}
