import Foundation

/// SPEC §2.3 step 4 for `pin-public-keys` (Alamofire's `PublicKeysTrustEvaluator`):
/// some certificate in `scope` has a pinned SubjectPublicKeyInfo digest.
///
/// Every digest of the scope is compared with every pin in constant time; an
/// empty pin set or an empty scope matches nothing (fail closed).
public struct PublicKeyPinEvaluator: TrustEvaluator {
    /// SHA-256 digests of pinned DER SubjectPublicKeyInfo structures.
    public let pins: [[UInt8]]
    public let scope: PinMatchScope

    public init(pins: [[UInt8]], scope: PinMatchScope = .verifiedChain) {
        self.pins = pins
        self.scope = scope
    }

    public func evaluate(_ chain: PeerChain, now: Date) -> TrustEvaluation {
        let digests = scope.certificates(of: chain).map(\.spkiSHA256)
        guard ConstantTimeBytes.anyEqual(digests, pins) else {
            return .failed(reason: .pinMismatch,
                           detail: "no certificate in \(scope.phrase) matches a pinned public key")
        }
        return .trusted
    }
}
