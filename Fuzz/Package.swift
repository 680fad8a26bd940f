// swift-tools-version:6.0
import PackageDescription

// libFuzzer harnesses over PinproxyCore's parsers (issue 7, "Fuzzing").
//
// A separate package so that the sanitizer flags never reach the daemon's own
// build: Fuzz/run.sh builds it with
//   swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
// which instruments PinproxyCore too (coverage feedback comes from the parsers,
// not from the harness). Each harness is one executable whose only entry point
// is `LLVMFuzzerTestOneInput`; libFuzzer supplies `main`.
let harnesses = ["FuzzRequestHead", "FuzzResponseHead", "FuzzConfiguration", "FuzzPin", "FuzzHostMatcher", "FuzzViolationLogLine"]

let package = Package(
    name: "pinproxy-fuzz",
    dependencies: [
        .package(name: "pinproxy", path: ".."),
    ],
    targets: [
        // Declares LLVMFuzzerRunDriver; libFuzzer itself comes with -sanitize=fuzzer.
        .systemLibrary(name: "CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"]),
    ] + harnesses.map { name in
        .executableTarget(name: name, dependencies: [
            "FuzzSupport",
            .product(name: "PinproxyCore", package: "pinproxy"),
        ])
    },
    swiftLanguageModes: [.v6]
)
