/// Something legal but risky in a configuration (no backup pin, pinning
/// disabled, pins about to expire, …), reported by `check` and at start.
public struct ConfigurationWarning: Sendable, Hashable, CustomStringConvertible {
    /// JSON path of the value the warning is about.
    public var path: String
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `$.path: message`.
    public var description: String { "\(path): \(message)" }
}
