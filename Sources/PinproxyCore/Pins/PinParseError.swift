/// Why a pin string from the configuration (or the command line) was refused.
///
/// `input` is the text as written, so a message can quote it; `message`
/// already includes the quotation.
public struct PinParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public var input: String
    public var message: String
    public init(input: String, message: String) {
        self.input = input
        self.message = message
    }
    public var description: String { message }
}
