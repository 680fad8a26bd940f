/// The raw libFuzzer input as a byte array, and deterministic choices derived
/// from it, so that every decision a harness makes is reproducible from the
/// saved crash file alone.
public struct FuzzInput: Sendable {
    public let bytes: [UInt8]

    public init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    }

    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// A split offset in `0...bytes.count` chosen by the input's last byte, so
    /// the fuzzer explores split points by mutating that byte.
    public var splitPoint: Int {
        guard let last = bytes.last else { return 0 }
        return bytes.count * Int(last) / 255
    }

    /// The input as text, with invalid UTF-8 repaired (the loaders take Strings).
    public var text: String { String(decoding: bytes, as: UTF8.self) }
}
