/// The field names pinproxy's framing and hop-by-hop rules act on (RFC 9110
/// §7.6.1, RFC 9112 §6), recognised case-insensitively; every other name is
/// `.other`.
enum KnownFieldName: UInt8, Sendable, Hashable {
    case other
    case connection, proxyConnection, keepAlive, te, trailer, upgrade, proxyAuthorization
    case contentLength, transferEncoding, host
    /// A framing field's name with `_` where the `-` belongs (`Content_Length`,
    /// `TRANSFER_ENCODING`): an origin behind a CGI/WSGI-style gateway maps
    /// both spellings to the same variable (`HTTP_CONTENT_LENGTH`), so it
    /// would read a framing field pinproxy did not frame by (SPEC §3: 400).
    case framingAlias

    /// The lower-case spelling (nil for `.other` and `.framingAlias`).
    var lowercasedName: StaticString? {
        switch self {
        case .other, .framingAlias: nil
        case .connection: "connection"
        case .proxyConnection: "proxy-connection"
        case .keepAlive: "keep-alive"
        case .te: "te"
        case .trailer: "trailer"
        case .upgrade: "upgrade"
        case .proxyAuthorization: "proxy-authorization"
        case .contentLength: "content-length"
        case .transferEncoding: "transfer-encoding"
        case .host: "host"
        }
    }

    /// Removed from every relayed message whatever `Connection` says.
    var isAlwaysHopByHop: Bool {
        switch self {
        case .connection, .proxyConnection, .keepAlive, .te, .trailer, .upgrade, .proxyAuthorization: true
        case .other, .contentLength, .transferEncoding, .host, .framingAlias: false
        }
    }

    /// `Content-Length` and `Transfer-Encoding`: never copied from a received
    /// head. The writers generate them from the framing pinproxy parsed and
    /// moves the body by (`FramingFieldWriter`), so no `Connection` option and
    /// no spelling of the received fields can change what the next hop frames by.
    var isFraming: Bool { self == .contentLength || self == .transferEncoding }

    /// A framing field, or one spelled as a framing field with `_` for `-`:
    /// never copied into a head pinproxy writes, which frames by its own
    /// (a peer that maps `_` to `-` would read the alias as framing).
    var isFramingOrAlias: Bool { isFraming || self == .framingAlias }

    /// Recognises `name`: the length picks at most two candidates, so most
    /// names are settled without looking at their bytes.
    init(_ name: some Collection<UInt8>) {
        if let known = name.withContiguousStorageIfAvailable({ KnownFieldName(bytes: UnsafeRawBufferPointer($0)) }) {
            self = known
        } else {
            self = Array(name).withUnsafeBytes { KnownFieldName(bytes: $0) }
        }
    }

    /// The same for a name in received bytes (the scanner asks this for every
    /// field line of every head): a plain loop, no generic element comparison.
    init(bytes name: UnsafeRawBufferPointer) {
        let first: KnownFieldName
        var second = KnownFieldName.other
        switch name.count {
        case 2: first = .te
        case 4: first = .host
        case 7: (first, second) = (.trailer, .upgrade)
        case 10: (first, second) = (.connection, .keepAlive)
        case 14: first = .contentLength
        case 16: first = .proxyConnection
        case 17: first = .transferEncoding
        case 19: first = .proxyAuthorization
        default: first = .other
        }
        func matches(_ spelling: StaticString?, underscoreAsDash: Bool = false) -> Bool {
            guard let spelling, spelling.utf8CodeUnitCount == name.count else { return false }
            let lower = spelling.utf8Start
            for index in 0..<name.count {
                let byte = name[index]
                guard HTTPSyntax.lowered(byte) == lower[index]
                    || (underscoreAsDash && byte == UInt8(ascii: "_") && lower[index] == UInt8(ascii: "-")) else { return false }
            }
            return true
        }
        if matches(first.lowercasedName) {
            self = first
        } else if matches(second.lowercasedName) {
            self = second
        } else if (first == .contentLength || first == .transferEncoding),
                  matches(first.lowercasedName, underscoreAsDash: true) {
            self = .framingAlias
        } else {
            self = .other
        }
    }
}
