/// The pins of one policy, resolved for evaluation: inline `pins` plus the
/// SPKI digests of `public_keys` files, and the DER of pinned `certificates`.
///
/// The runtime loads and digests the files when it builds a configuration, so
/// evaluation never touches the file system or a certificate parser.
public struct PinMaterial: Sendable, Hashable {
    /// SHA-256 digests of DER SubjectPublicKeyInfo structures (32 bytes each).
    public var spkiDigests: [[UInt8]]
    /// DER encodings of pinned certificates, compared byte for byte.
    public var certificateDERs: [[UInt8]]

    public init(spkiDigests: [[UInt8]] = [], certificateDERs: [[UInt8]] = []) {
        self.spkiDigests = spkiDigests
        self.certificateDERs = certificateDERs
    }

    /// The material of `policy`: its inline `pins` followed by `publicKeyDigests`
    /// (the digests of its `public_keys` files) without repeats, and the DER of
    /// its `certificates` files.
    public init(policy: TrustPolicy, publicKeyDigests: [[UInt8]] = [], certificateDERs: [[UInt8]] = []) {
        var digests: [[UInt8]] = []
        for digest in policy.pins.map(\.digest) + publicKeyDigests where !digests.contains(digest) {
            digests.append(digest)
        }
        self.init(spkiDigests: digests, certificateDERs: certificateDERs)
    }

    /// The SPKI pins spelled `sha256/<base64>`, in order, for `known_pins` in the log.
    /// Digests that are not 32 bytes long (never produced by the runtime) are left out.
    public var pinSpellings: [String] {
        spkiDigests.compactMap { SPKIPin(digest: $0)?.description }
    }
}
