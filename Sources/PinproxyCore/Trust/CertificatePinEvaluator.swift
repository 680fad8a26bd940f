import Foundation

/// SPEC §2.3 step 4 for `pin-certificates` (Alamofire's `PinnedCertificatesTrustEvaluator`):
/// some certificate in `scope` is byte-equal (DER) to a pinned certificate.
///
/// Byte equality of the whole DER, not of a digest or a name: a reissued
/// certificate with the same key does not match. Empty pins or an empty scope
/// match nothing (fail closed).
public struct CertificatePinEvaluator: TrustEvaluator {
    /// DER encodings of the pinned certificates.
    public let certificateDERs: [[UInt8]]
    public let scope: PinMatchScope

    public init(certificateDERs: [[UInt8]], scope: PinMatchScope = .verifiedChain) {
        self.certificateDERs = certificateDERs
        self.scope = scope
    }

    public func evaluate(_ chain: PeerChain, now: Date) -> TrustEvaluation {
        let ders = scope.certificates(of: chain).map(\.der)
        guard ConstantTimeBytes.anyEqual(ders, certificateDERs) else {
            return .failed(reason: .pinMismatch,
                           detail: "no certificate in \(scope.phrase) is a pinned certificate")
        }
        return .trusted
    }
}
