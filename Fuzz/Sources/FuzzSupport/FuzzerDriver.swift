internal import CLibFuzzer

/// Starts libFuzzer from a harness's own entry point.
///
/// SwiftPM (6.3, Linux) renames every executable's entry point to
/// `<Module>_main` and links with `--defsym main=<Module>_main`, so libFuzzer's
/// own `main` is never used and a harness without `<Module>_main` fails to
/// link. Each harness therefore exports `<Module>_main` and calls
/// `LLVMFuzzerRunDriver` (libFuzzer's entry for programs that own `main`),
/// which parses the usual libFuzzer flags from `argv`.
public enum FuzzerDriver {
    public typealias TestOneInput = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32

    public static func run(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                           _ testOneInput: TestOneInput) -> Int32 {
        var count = argc
        var arguments = argv
        return LLVMFuzzerRunDriver(&count, &arguments, testOneInput)
    }
}
