import Foundation

/// A pin validation failure report in the format of RFC 7469 §3 (HPKP's
/// `report-uri`), as TrustKit sends it: what an existing report collector
/// expects, POSTed to a host entry's `report_uri`.
public enum PinFailureReport {
    /// The JSON body of one report. `validatedChain` is the chain OpenSSL
    /// built (empty when path validation failed); `expires` is the pin set's
    /// expiry, reported as `effective-expiration-date` when there is one.
    public static func body(for event: ViolationEvent, validatedChain: [CertificateFacts],
                            expires: PinExpiry?) -> [UInt8] {
        var json = JSONLineWriter(capacity: 1024 + event.servedChain.reduce(0) { $0 + $1.der.count * 3 })
        json.beginObject()
        json.key("date-time"); json.string(RFC3339Timestamp.seconds(event.time))
        json.key("hostname"); json.string(event.host)
        json.key("port"); json.integer(Int(event.port))
        if let expires {
            json.key("effective-expiration-date"); json.string(RFC3339Timestamp.seconds(expires.firstExpiredInstant))
        }
        json.key("include-subdomains"); json.bool(event.includeSubdomains)
        json.key("noted-hostname"); json.string(event.rule)
        json.key("served-certificate-chain"); json.beginArray()
        for certificate in event.servedChain { json.string(PEMCertificate.encode(der: certificate.der)) }
        json.endArray()
        json.key("validated-certificate-chain"); json.beginArray()
        for certificate in validatedChain { json.string(PEMCertificate.encode(der: certificate.der)) }
        json.endArray()
        // RFC 7469 §2.1.1 spelling: pin-sha256="<base64>".
        json.key("known-pins"); json.beginArray()
        for pin in event.knownPins where pin.hasPrefix("sha256/") {
            json.string("pin-sha256=\"\(pin.dropFirst("sha256/".count))\"")
        }
        json.endArray()
        json.endObject()
        return json.bytes
    }
}
