import Foundation

/// `openssl s_server` on an ephemeral loopback port serving leaf + intermediate, with
/// `-status_file` stapling a fixed OCSP response (or none), at one TLS version.
final class StaplingServer {
    let port: UInt16
    private let process: ChildProcess

    init(leaf: String, intermediate: String, key: String, staple: String?, tlsVersion: String, directory: String) throws {
        process = try ChildProcess("/usr/bin/openssl", ["s_server", "-accept", "127.0.0.1:0", "-cert", leaf,
                                                        "-cert_chain", intermediate, "-key", key, "-www",
                                                        tlsVersion == "1.3" ? "-tls1_3" : "-tls1_2"]
                                       + (staple.map { ["-status_file", $0] } ?? []))
        // s_server announces its port on stdout: "ACCEPT 127.0.0.1:PORT".
        port = try process.waitForOutput(on: .stdout, timeout: 10) { text in
            text.split(separator: "\n").first { $0.hasPrefix("ACCEPT ") }
                .flatMap { $0.split(separator: ":").last }.flatMap { UInt16($0) }
        }
    }
}
