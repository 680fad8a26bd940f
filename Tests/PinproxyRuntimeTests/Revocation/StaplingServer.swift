import Foundation

/// `openssl s_server` on an ephemeral loopback port serving leaf + intermediate, with
/// `-status_file` stapling a fixed OCSP response (or none), at one TLS version.
final class StaplingServer {
    let port: UInt16
    private let process: Process
    private let output: String

    init(leaf: String, intermediate: String, key: String, staple: String?, tlsVersion: String, directory: String) throws {
        output = directory + "/s_server-\(UUID().uuidString).out"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["s_server", "-accept", "127.0.0.1:0", "-cert", leaf, "-cert_chain", intermediate, "-key", key, "-www",
                             tlsVersion == "1.3" ? "-tls1_3" : "-tls1_2"]
            + (staple.map { ["-status_file", $0] } ?? [])
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: output)
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        var found: UInt16?
        while found == nil && Date() < deadline && process.isRunning {
            usleep(20_000)
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            found = text.split(separator: "\n").first { $0.hasPrefix("ACCEPT ") }
                .flatMap { $0.split(separator: ":").last }.flatMap { UInt16($0) }
        }
        guard let found else {
            process.terminate()
            throw TestFailure("openssl s_server did not start")
        }
        port = found
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
