import Foundation
import PinproxyCore
internal import COpenSSL

/// Reads a stapled OCSP response (RFC 6960, RFC 6066 §8) with OpenSSL's OCSP
/// API and says what it establishes about the leaf (SPEC §2.1 `ocsp_stapling`).
enum OCSPStaple {
    /// Clock skew allowed on thisUpdate / nextUpdate, as `openssl ocsp` does by default.
    static let validityLeeway = 300

    /// The status of `leaf` in `response` (DER), signed by its `issuer` or a
    /// responder that `issuer` delegated to (checked against `store`, with
    /// `chain` as untrusted helpers), current at the time of the call.
    static func status(of response: [UInt8], leaf: X509Certificate, issuer: X509Certificate,
                       chain: [X509Certificate], store: TrustStore) -> StapleStatus {
        ERR_clear_error()
        defer { ERR_clear_error() }
        let parsed: OpaquePointer? = response.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_OCSP_RESPONSE(nil, &cursor, buffer.count)
        }
        guard let parsed else { return .unusable(detail: "not a DER OCSP response") }
        defer { OCSP_RESPONSE_free(parsed) }
        let responseStatus = OCSP_response_status(parsed)
        guard responseStatus == OCSP_RESPONSE_STATUS_SUCCESSFUL else {
            return .unusable(detail: "responder status \(String(cString: OCSP_response_status_str(Int(responseStatus))))")
        }
        // get1: the basic response is ours to free.
        guard let basic = OCSP_response_get1_basic(parsed) else { return .unusable(detail: "no basic response") }
        defer { OCSP_BASICRESP_free(basic) }
        guard let helpers = CertificateStack(chain) else { return .unusable(detail: "out of memory") }
        // Verifies the signature and that the signer is the issuer or a responder it authorised (id-kp-OCSPSigning).
        guard OCSP_basic_verify(basic, helpers.pointer, store.pointer, 0) == 1 else {
            return .unusable(detail: "its signature or signer does not verify")
        }
        guard let identifier = OCSP_cert_to_id(nil, leaf.pointer, issuer.pointer) else {
            return .unusable(detail: "cannot identify the leaf")
        }
        defer { OCSP_CERTID_free(identifier) }
        var status: Int32 = -1, reason: Int32 = -1
        var revokedAt: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?, thisUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        guard OCSP_resp_find_status(basic, identifier, &status, &reason, &revokedAt, &thisUpdate, &nextUpdate) == 1 else {
            return .unusable(detail: "it says nothing about the leaf")
        }
        guard OCSP_check_validity(thisUpdate, nextUpdate, validityLeeway, -1) == 1 else {
            return .unusable(detail: "it is not current (thisUpdate/nextUpdate)")
        }
        switch status {
        case V_OCSP_CERTSTATUS_GOOD:
            return .good
        case V_OCSP_CERTSTATUS_REVOKED:
            let when = revokedAt.map { " at " + RFC3339Timestamp.seconds(X509Certificate.date(UnsafePointer($0))) } ?? ""
            return .revoked(detail: "the leaf certificate \(leaf.facts.subject) is revoked\(when)")
        default:
            return .unusable(detail: "its status for the leaf is unknown")
        }
    }
}
