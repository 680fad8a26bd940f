import FuzzSupport
import PinproxyCore

/// libFuzzer harness over `ResponseHeadParser.parse` and `ChunkedFramer`
/// (RFC 9112 §4, §6.3, §7.1).
///
/// The input is a response: its head is parsed (for GET and for HEAD), and
/// the bytes after a complete head — or the whole input when there is no
/// complete head — are driven through a `ChunkedFramer` the way the runtime
/// drives it. See `ResponseHeadInvariants` and `ChunkedFramerDriver`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResponseHead(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = FuzzInput(data, size)
    let bodyStart = ResponseHeadInvariants.check(input.bytes)
    let body = Array(input.bytes[bodyStart...])
    ChunkedFramerDriver.checkSplitInvariance(body, split: min(input.splitPoint, body.count))
    return 0
}

/// The entry point SwiftPM links as `main` (see `FuzzerDriver`).
@_cdecl("FuzzResponseHead_main")
public func fuzzResponseHeadMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzerDriver.run(argc, argv, fuzzResponseHead)
}
