// swift-tools-version:6.0
import PackageDescription

// C lives in its own system-library targets (forward-only shims); only
// PinproxyRuntime imports them. PinproxyCore is pure Swift so that policy code
// can never touch a pointer.
// Release builds check exclusive access statically only. Dynamic checks
// (every mutation of a class's stored property: a session's machine, its
// action queue) cost about 2,000 instructions per keep-alive request; debug
// builds, and so every test and sanitizer run, keep them.
let releaseSettings: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "pinproxy",
    products: [
        .executable(name: "pinproxy", targets: ["pinproxy"]),
        // For the fuzz harnesses in Fuzz/, a separate package built with sanitizers.
        .library(name: "PinproxyCore", targets: ["PinproxyCore"]),
    ],
    targets: [
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CLibevent",
            pkgConfig: "libevent",
            providers: [.apt(["libevent-dev"])]
        ),
        .systemLibrary(name: "CGlibcMalloc"),
        // posix_spawn and pidfd_open for the custom policy's command.
        .systemLibrary(name: "CProcess"),
        // `pinproxy tail` reads logrotate's .gz files (GzipDecoder).
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(name: "PinproxyCore", swiftSettings: releaseSettings),
        .target(
            name: "PinproxyRuntime",
            dependencies: ["PinproxyCore", "COpenSSL", "CLibevent", "CGlibcMalloc", "CZlib", "CProcess"],
            swiftSettings: releaseSettings
        ),
        .executableTarget(
            name: "pinproxy",
            dependencies: ["PinproxyCore", "PinproxyRuntime"]
        ),
        // `bench/leaf-mint-cost.sh`: the cost of minting one interception leaf.
        .executableTarget(
            name: "leaf-mint-bench",
            dependencies: ["PinproxyCore", "PinproxyRuntime"],
            path: "bench/LeafMint"
        ),
        .testTarget(
            name: "PinproxyCoreTests",
            dependencies: ["PinproxyCore"]
        ),
        .testTarget(
            name: "PinproxyRuntimeTests",
            dependencies: ["PinproxyCore", "PinproxyRuntime", "COpenSSL", "CLibevent", "CProcess"],
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
