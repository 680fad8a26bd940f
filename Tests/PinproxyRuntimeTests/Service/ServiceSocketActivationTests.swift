import Foundation
import Testing

/// Socket activation as `pinproxy.socket` does it (SPEC §5): the listening
/// socket arrives as fd 3 with `LISTEN_FDS=1` and `LISTEN_PID`, and the daemon
/// serves on it instead of binding the configured address itself.
@Suite("pinproxy under systemd: socket activation", .serialized)
struct ServiceSocketActivationTests {
    @Test("the inherited socket for the configured address is the one that serves", arguments: [1, 2])
    func servesOnInheritedSocket(threads: Int) throws {
        let service = try ServiceUnderTest(body: #""default_policy": "deny", "threads": \#(threads),"#)
        try service.start(.init(signalMask: .clean, activatedSockets: [.init(port: service.port)]))
        let process = try service.running()

        let denied = try Curl.run(["-x", service.proxy, "http://blocked.example/"])
        #expect(denied.status == 403)
        #expect(denied.header("Proxy-Status") == "pinproxy; error=http_request_denied")
        // Exactly one socket listens on the port, and it is the daemon's fd 3:
        // pinproxy adopted it rather than binding a second one beside it.
        let listening = Self.listeningInodes(port: service.port)
        #expect(listening.count == 1)
        #expect(listening.first == Self.socketInode(pid: process.pid, fd: 3))

        process.send(SIGTERM)
        #expect(process.waitForExit(timeout: 20) == 0, "stderr:\n\(process.stderrText)")
    }

    @Test("LISTEN_PID of another process: the fd is not adopted, and binding the taken address fails with exit 3")
    func ignoresSocketsForAnotherPid() throws {
        let service = try ServiceUnderTest(body: #""default_policy": "deny", "threads": 1,"#)
        try service.launch(.init(signalMask: .clean, activatedSockets: [.init(port: service.port)], listenPID: .other(1)))
        let process = try service.running()
        #expect(process.waitForExit(timeout: 20) == 3)
        #expect(process.stderrText.contains("127.0.0.1:\(service.port)"), "stderr:\n\(process.stderrText)")
        #expect(NotifyListener.states(service.notifications.receive(until: { _ in false }, timeout: 0.1)) == [])
    }

    @Test("an inherited socket that no listener names fails the start with exit 3, naming both addresses",
          arguments: [false, true])
    func refusesUnmatchedInheritedSocket(alongsideMatchedOne: Bool) throws {
        let service = try ServiceUnderTest(body: #""default_policy": "deny", "threads": 1,"#)
        let stray = ToolPaths.freePort()
        let sockets: [ChildProcess.Options.ActivatedSocket] = (alongsideMatchedOne ? [.init(port: service.port)] : [])
            + [.init(port: stray, name: "stray")]
        try service.launch(.init(signalMask: .clean, activatedSockets: sockets))
        let process = try service.running()
        // Silently serving on the configured address while systemd queues the
        // stray socket's clients is what this start must not do.
        #expect(process.waitForExit(timeout: 20) == 3, "stderr:\n\(process.stderrText)")
        let log = process.stderrText
        #expect(log.contains("fd \(alongsideMatchedOne ? 4 : 3) (127.0.0.1:\(stray), FileDescriptorName=stray)"), "stderr:\n\(log)")
        #expect(log.contains("matches no configured listener (listeners: 127.0.0.1:\(service.port))"), "stderr:\n\(log)")
        #expect(NotifyListener.states(service.notifications.receive(until: { _ in false }, timeout: 0.1)) == [])
    }

    /// Inodes of the IPv4 sockets in LISTEN state on 127.0.0.1:`port` (/proc/net/tcp).
    static func listeningInodes(port: UInt16) -> [String] {
        let table = contents(of: "/proc/net/tcp")
        let local = "0100007F:" + String(format: "%04X", port)
        return table.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: " ")
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            guard fields.count > 9, fields[1] == local, fields[3] == "0A" else { return nil }
            return String(fields[9])
        }
    }

    /// The inode of `socket:[N]` that /proc/`pid`/fd/`fd` links to.
    static func socketInode(pid: Int32, fd: Int32) -> String? {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
              target.hasPrefix("socket:[") else { return nil }
        return String(target.dropFirst("socket:[".count).dropLast())
    }
}
