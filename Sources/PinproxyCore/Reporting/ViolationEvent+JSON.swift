import Foundation

extension ViolationEvent {
    /// The event name of a full violation line (SPEC §4 `event`).
    public static let eventName = "pin_violation"

    /// The event as one line of the violation log (SPEC §4): UTF-8 JSON, keys
    /// in the order of the SPEC, terminated by exactly one `"\n"` and
    /// containing no other newline, ready for a single `write(2)`.
    ///
    /// Written by hand (`JSONLineWriter`) rather than with `JSONEncoder`, so the
    /// key order is fixed and the path allocates one buffer.
    public func jsonLine() -> [UInt8] {
        var json = JSONLineWriter(capacity: 1024 + servedChain.reduce(0) { $0 + $1.der.count * 2 })
        json.beginObject()
        json.key("time"); json.string(RFC3339Timestamp.milliseconds(time))
        json.key("event"); json.string(Self.eventName)
        json.key("action"); json.string(action.rawValue)
        json.key("reason"); json.string(reason.rawValue)
        json.key("host"); json.string(host)
        json.key("port"); json.integer(Int(port))
        json.key("peer_address"); json.string(peerAddress)
        json.key("rule"); json.string(rule)
        json.key("policy"); json.string(policy.rawValue)
        json.key("enforce"); json.bool(enforce)
        json.key("include_subdomains"); json.bool(includeSubdomains)
        json.key("known_pins"); json.beginArray()
        for pin in knownPins { json.string(pin) }
        json.endArray()
        json.key("served_chain"); json.beginArray()
        for certificate in servedChain { Self.write(certificate, to: &json) }
        json.endArray()
        json.key("served_certificate_chain"); json.beginArray()
        for certificate in servedChain { json.string(PEMCertificate.encode(der: certificate.der)) }
        json.endArray()
        json.key("client_address"); json.string(clientAddress)
        json.key("listener"); json.string(listener)
        json.key("client_transport"); json.string(clientTransport.rawValue)
        json.key("config_generation"); json.integer(configGeneration)
        json.key("request"); json.beginObject()
        json.key("method"); json.string(requestMethod)
        // Defence in depth: stripped again even though every setter already did.
        json.key("target"); json.string(Self.withoutQuery(requestTarget))
        json.endObject()
        json.key("detail"); json.string(detail)
        json.endObject()
        var line = json.bytes
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// One `served_chain` entry: subject, issuer, validity (RFC 3339 seconds),
    /// `sha256/<base64>` of the SPKI, lower-case hex SHA-256 of the DER.
    private static func write(_ certificate: CertificateFacts, to json: inout JSONLineWriter) {
        json.beginObject()
        json.key("subject"); json.string(certificate.subject)
        json.key("issuer"); json.string(certificate.issuer)
        json.key("not_before"); json.string(RFC3339Timestamp.seconds(certificate.notBefore))
        json.key("not_after"); json.string(RFC3339Timestamp.seconds(certificate.notAfter))
        json.key("spki_sha256"); json.string("sha256/" + Data(certificate.spkiSHA256).base64EncodedString())
        json.key("cert_sha256"); json.string(Hex.lowercase(certificate.certificateSHA256))
        json.endObject()
    }
}
