/// A parsed and validated upstream response head (RFC 9112 §4, §6.3).
///
/// Built by `ResponseHeadParser` for a given request method, so `bodyFraming`
/// already accounts for HEAD, 1xx, 204 and 304 (no body), and
/// `wantsKeepAlive` is false whenever the body is delimited by close.
public struct HTTPResponseHead: Sendable, Hashable {
    public var version: HTTPVersion
    public var status: Int
    public var reason: String
    /// The field lines as received (see `FieldSection`).
    public var fieldSection: FieldSection
    /// The fields as Strings; made on each access (the relay uses `fieldSection`).
    public var fields: [HTTPField] {
        get { fieldSection.fields }
        set { fieldSection = FieldSection(newValue) }
    }
    public var bodyFraming: BodyFraming
    /// What the framing fields say (`.none`, `.contentLength`, `.chunked`)
    /// before the request method and status decide whether a body follows:
    /// the field the writer relays, so a HEAD or 304 response keeps the length
    /// a GET would have had (RFC 9110 §8.6) while `bodyFraming` is `.none`.
    public var declaredFraming: BodyFraming
    public var wantsKeepAlive: Bool
    /// 1xx other than 101 (100 Continue, 103 Early Hints): a final response follows.
    public var isInformational: Bool

    /// `declaredFraming` defaults to `bodyFraming` (`.none` for a body until close).
    public init(version: HTTPVersion, status: Int, reason: String, fields: [HTTPField],
                bodyFraming: BodyFraming, declaredFraming: BodyFraming? = nil,
                wantsKeepAlive: Bool, isInformational: Bool) {
        self.init(version: version, status: status, reason: reason, fieldSection: FieldSection(fields),
                  bodyFraming: bodyFraming, declaredFraming: declaredFraming,
                  wantsKeepAlive: wantsKeepAlive, isInformational: isInformational)
    }

    init(version: HTTPVersion, status: Int, reason: String, fieldSection: FieldSection,
         bodyFraming: BodyFraming, declaredFraming: BodyFraming?, wantsKeepAlive: Bool, isInformational: Bool) {
        self.version = version
        self.status = status
        self.reason = reason
        self.fieldSection = fieldSection
        self.bodyFraming = bodyFraming
        self.declaredFraming = declaredFraming ?? (bodyFraming == .untilClose ? .none : bodyFraming)
        self.wantsKeepAlive = wantsKeepAlive
        self.isInformational = isInformational
    }

    /// The values of every field named `name`, compared case-insensitively, in order.
    public func values(of name: String) -> [String] { fieldSection.values(named: name) }
}
