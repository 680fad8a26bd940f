import Foundation
@testable import PinproxyRuntime

/// Where the repository's test tools are, found from this file's location so
/// the tests run the same from any working directory.
enum ToolPaths {
    static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }   // Support → PinproxyRuntimeTests → Tests → root
        return url.path
    }()

    /// `Tests/Tools/<name>`: the python peers and load tools.
    static func tool(_ name: String) -> String { repositoryRoot + "/Tests/Tools/" + name }

    /// The first executable named `tool` on PATH or in the usual system
    /// folders; nil when it is not installed (a suite that needs it is disabled).
    static func executable(named tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/local/bin", "/usr/bin", "/bin"]
        return folders.map { $0 + "/" + tool }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Ports already handed out in this process. The kernel may give the same
    /// ephemeral port to two probes in a row once the first is closed, and a
    /// test that asked for two ports then configured one address twice.
    private static let handedOut = Locked<Set<UInt16>>([])

    /// A port that was free a moment ago on 127.0.0.1, never one returned before.
    static func freePort() -> UInt16 {
        while true {
            let port = probePort()
            if handedOut.withLock({ $0.insert(port).inserted }) { return port }
        }
    }

    private static func probePort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                _ = bind(fd, pointer, length)
                return getsockname(fd, pointer, &length)
            }
        }
        return UInt16(bigEndian: address.sin_port)
    }
}
