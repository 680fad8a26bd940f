/// A parsed and validated request head (RFC 9112 §3, §5, §6).
///
/// Built by `RequestHeadParser`, which guarantees: `method` is a token,
/// `target` is visible ASCII without spaces, field names are tokens, field
/// values hold no CR, LF or NUL, and `bodyFraming` is unambiguous (never
/// `.untilClose`: a request without framing fields has no body).
public struct HTTPRequestHead: Sendable, Hashable {
    public var method: String
    public var target: String
    public var version: HTTPVersion
    /// The field lines as received (see `FieldSection`).
    public var fieldSection: FieldSection
    /// The fields as Strings; made on each access (the relay uses `fieldSection`).
    public var fields: [HTTPField] {
        get { fieldSection.fields }
        set { fieldSection = FieldSection(newValue) }
    }
    public var bodyFraming: BodyFraming
    /// 1.1: unless `Connection: close`; 1.0: only with `Connection: keep-alive`.
    public var wantsKeepAlive: Bool
    /// `Expect: 100-continue` was sent (RFC 9110 §10.1.1).
    public var expectsContinue: Bool
    /// The 100-continue expectation is addressed to pinproxy itself: a
    /// `Connection` option names `Expect`, so the field is not forwarded and
    /// no upstream will answer it (RFC 9110 §7.6.1, §10.1.1). pinproxy then
    /// sends `100 Continue` itself once the request is on its way upstream.
    public var continueIsForProxy = false

    public init(method: String, target: String, version: HTTPVersion, fields: [HTTPField],
                bodyFraming: BodyFraming, wantsKeepAlive: Bool, expectsContinue: Bool) {
        self.init(method: method, target: target, version: version, fieldSection: FieldSection(fields),
                  bodyFraming: bodyFraming, wantsKeepAlive: wantsKeepAlive, expectsContinue: expectsContinue)
    }

    init(method: String, target: String, version: HTTPVersion, fieldSection: FieldSection,
         bodyFraming: BodyFraming, wantsKeepAlive: Bool, expectsContinue: Bool) {
        self.method = method
        self.target = target
        self.version = version
        self.fieldSection = fieldSection
        self.bodyFraming = bodyFraming
        self.wantsKeepAlive = wantsKeepAlive
        self.expectsContinue = expectsContinue
    }

    /// The values of every field named `name`, compared case-insensitively, in order.
    public func values(of name: String) -> [String] { fieldSection.values(named: name) }
}
