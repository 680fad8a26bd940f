import Foundation
import FuzzSupport
import PinproxyCore

/// libFuzzer harness over what `pinproxy tail` reads: `ViolationLogReader`
/// (bytes → lines), `ViolationLogRecord.parse` (line → record) and
/// `TailFormatter` (record → the readable line), plus the daemon's writer
/// (`ViolationEvent.jsonLine`) in a round trip.
///
/// The first byte picks the mode. Mode "log" treats the rest as log bytes
/// arriving in two reads; mode "event" builds an event from the rest.
/// Invariants live in `LogLineInvariants`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzViolationLogLine(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = FuzzInput(data, size)
    guard let mode = input.bytes.first else { return 0 }
    let rest = FuzzInput(bytes: Array(input.bytes.dropFirst()))
    if mode & 1 == 0 {
        LogLineInvariants.checkLogBytes(rest)
    } else {
        LogLineInvariants.checkRoundTrip(rest)
    }
    return 0
}

/// The entry point SwiftPM links as `main` (see `FuzzerDriver`).
@_cdecl("FuzzViolationLogLine_main")
public func fuzzViolationLogLineMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzerDriver.run(argc, argv, fuzzViolationLogLine)
}
