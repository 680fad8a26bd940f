import Foundation

/// The factory that turns a `TrustPolicy` and its resolved pins into the
/// evaluator a `TrustCheck` runs (SPEC §2.1, §2.3).
///
/// What each policy checks, in order (the first failure decides):
///
/// | policy | checks |
/// |---|---|
/// | `disable` | none |
/// | `default`, `anchors` | chain (OpenSSL, web-PKI profile, OCSP staple) → host (when `validate_host`) |
/// | `pin-*`, `validate_chain` | chain → host → pins against the verified chain |
/// | `pin-*`, no `validate_chain` | host → pins against the signing path |
/// | `pin-*` after `expires` | chain → host |
/// | `pin-public-keys` `"learn"`, nothing learned yet | chain → host (`firstUseEvaluator`) |
/// | `pin-public-keys` `"learn"`, learned | as with those pins listed |
/// | `custom` | (chain when `validate_chain`) → host → the command (`TrustCheck`) |
/// | `custom` after `expires` | chain → host |
///
/// `validate_chain` is a key of the pin policies and `custom` only: `default` and `anchors`
/// always validate the chain (the runtime validates against the anchors instead
/// of the store for `anchors`). Once a pin set has expired the policy falls back
/// to chain and host even when `validate_chain` is false: skipping chain
/// validation is only ever justified by a pin, and SPEC §2.1 says that after
/// `expires` "chain + host still are" enforced — an expired pin set must fail
/// closed, not leave a self-signed server unchecked.
public enum PolicyEvaluation {
    /// The evaluator for `policy`, built once per configuration and reusable
    /// across handshakes: it holds no time, only the expiry day.
    ///
    /// Inline `policy.pins` are always included with `material.spkiDigests`,
    /// so a caller cannot lose them by building the material by hand.
    public static func evaluator(for policy: TrustPolicy, material: PinMaterial,
                                 publicSuffixes: PublicSuffixList) -> any TrustEvaluator {
        let chain = chainChecks(policy, publicSuffixes: publicSuffixes)
        let unpinned = CompositeEvaluator(checks(chain: chain, host: policy.validateHost))
        switch policy.kind {
        case .disable:
            return DisabledEvaluator()
        case .default, .anchors:
            return unpinned
        case .pinPublicKeys, .pinCertificates:
            let scope: PinMatchScope = policy.validateChain ? .verifiedChain : .signingPath
            let pin: any TrustEvaluator = policy.kind == .pinPublicKeys
                ? PublicKeyPinEvaluator(pins: PinMaterial(policy: policy, publicKeyDigests: material.spkiDigests).spkiDigests,
                                        scope: scope)
                : CertificatePinEvaluator(certificateDERs: material.certificateDERs, scope: scope)
            let pinned = CompositeEvaluator(checks(chain: policy.validateChain ? chain : [], host: policy.validateHost) + [pin])
            guard let expires = policy.expires else { return pinned }
            return PinExpirySwitch(expires: expires, pinned: pinned, unpinned: unpinned)
        case .custom:
            // The command stands where the pins stand (`TrustCheck` asks it
            // after these pass), and like them it alone may justify skipping
            // chain validation; after `expires`, chain and host decide.
            let beforeCommand = CompositeEvaluator(checks(chain: policy.validateChain ? chain : [], host: policy.validateHost))
            guard let expires = policy.expires else { return beforeCommand }
            return PinExpirySwitch(expires: expires, pinned: beforeCommand, unpinned: unpinned)
        }
    }

    /// `default` evaluation under `policy`'s own settings (chain → host when
    /// `validate_host`, its revocation settings), pins left out: what guards
    /// the first connection of a rule with `"pins": "learn"` (SPEC §2.1), the
    /// one whose verified chain is learned. The chain is always validated, as
    /// `default` does, whatever `validate_chain` says: nothing is pinned yet
    /// that could stand in for the trust store.
    public static func firstUseEvaluator(for policy: TrustPolicy, publicSuffixes: PublicSuffixList) -> any TrustEvaluator {
        CompositeEvaluator(checks(chain: chainChecks(policy, publicSuffixes: publicSuffixes), host: policy.validateHost))
    }

    /// SPEC §2.3 step 2: OpenSSL's path validation, then the web-PKI rules
    /// OpenSSL 3.0 lacks (each reads the verified chain), then the OCSP staple.
    static func chainChecks(_ policy: TrustPolicy, publicSuffixes: PublicSuffixList) -> [any TrustEvaluator] {
        [ChainValidationEvaluator(), PublicKeyStrengthEvaluator(), CertificateRoleEvaluator(),
         NameConstraintEvaluator(), WildcardSuffixEvaluator(publicSuffixes: publicSuffixes),
         RevocationEvaluator(mode: policy.ocspStapling)]
    }

    /// SPEC §2.3 steps 2 and 3, in that order.
    private static func checks(chain: [any TrustEvaluator], host: Bool) -> [any TrustEvaluator] {
        chain + (host ? [HostNameEvaluator()] : [])
    }
}
