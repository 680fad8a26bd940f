import PinproxyCore

/// One `PolicyMaterial` per distinct set of pins and files within a
/// configuration generation: host rules that pin the same keys (the hosts of
/// one fleet, a backup key kept for many) or name the same files share one
/// loaded copy, and each file is read and parsed once per build, not once per
/// rule. A material is immutable, so sharing it across rules changes nothing
/// a handshake sees.
///
/// A failure is kept too: every rule that names the same broken file reports
/// the same error, as it did when each rule loaded its own.
final class PolicyMaterialCache {
    /// Everything `PolicyMaterial.load(for:)` reads from a policy.
    struct Inputs: Hashable {
        var pins: [SPKIPin]
        var publicKeyFiles: [String]
        var certificateFiles: [String]
        var anchorFiles: [String]
        var clientCredentials: ClientCredentialFiles?
        var crlFiles: [String]

        init(_ policy: TrustPolicy) {
            pins = policy.pins
            publicKeyFiles = policy.publicKeyFiles
            certificateFiles = policy.certificateFiles
            anchorFiles = policy.anchorFiles
            clientCredentials = policy.clientCredentials
            crlFiles = policy.crlFiles
        }
    }

    private var materials: [Inputs: Result<PolicyMaterial, any Error>] = [:]
    /// Materials of policies that name no file (nearly every rule of a large
    /// configuration), by their pins alone: a cheaper key to hash, same answer.
    private var pinsOnly: [[SPKIPin]: PolicyMaterial] = [:]

    init() {}

    /// The material of `policy`, loaded the first time these inputs are asked for.
    func material(for policy: TrustPolicy) throws -> PolicyMaterial {
        if policy.publicKeyFiles.isEmpty, policy.certificateFiles.isEmpty, policy.anchorFiles.isEmpty,
           policy.clientCredentials == nil, policy.crlFiles.isEmpty {
            if let known = pinsOnly[policy.pins] { return known }
            // Loading reads no file here, so it cannot fail for one rule and not another.
            let loaded = try PolicyMaterial.load(for: policy)
            pinsOnly[policy.pins] = loaded
            return loaded
        }
        let inputs = Inputs(policy)
        if let known = materials[inputs] { return try known.get() }
        let loaded = Result { try PolicyMaterial.load(for: policy) }
        materials[inputs] = loaded
        return try loaded.get()
    }

    /// How many distinct materials were loaded.
    var count: Int { materials.count + pinsOnly.count }
}
