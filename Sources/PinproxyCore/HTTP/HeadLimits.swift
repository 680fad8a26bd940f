/// Size limits applied while a head is still arriving, so an endless head is
/// refused as soon as it crosses a limit instead of being buffered.
///
/// `maxHeaderBytes` bounds the whole head (start line, field lines and the
/// empty line); `maxTargetBytes` bounds the request-target alone (RFC 9112 §3:
/// 414 for a target longer than the server is willing to interpret).
public struct HeadLimits: Sendable, Hashable {
    public var maxHeaderBytes: Int
    public var maxTargetBytes: Int

    public init(maxHeaderBytes: Int = 65536, maxTargetBytes: Int = 8192) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxTargetBytes = maxTargetBytes
    }
}
