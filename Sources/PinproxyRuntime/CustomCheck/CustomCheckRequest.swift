import PinproxyCore

/// What identifies one question to a custom policy's command: the rule (the
/// `CustomEvaluation` of one configuration generation, so a reload asks
/// again), the upstream host and port, and the served chain's fingerprint.
struct CustomCheckKey: Hashable, Sendable {
    let scope: ObjectIdentifier
    let host: String
    let port: UInt16
    /// SHA-256 over the served certificates' SHA-256 fingerprints, leaf first.
    let chain: [UInt8]
}

/// One run of a custom policy's command, made ready (SPEC §2.1): its argument
/// vector, its whole environment, the PEM it reads, and its time limit.
struct CustomCheckRequest: Sendable {
    let key: CustomCheckKey
    /// The rule's evaluation that `key.scope` identifies, kept alive while
    /// the request is: an identifier outlived by its object could be taken
    /// by a later generation's, which must never join this run.
    let scope: CustomEvaluation
    let command: [String]
    /// `NAME=value` strings: the child's entire environment.
    let environment: [String]
    /// The served chain as PEM, leaf first.
    let input: [UInt8]
    let timeout: Duration
}
