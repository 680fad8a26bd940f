import Foundation

/// Counts the TCP sockets this test process holds on the daemon's behalf, by
/// matching the socket inodes of `/proc/self/fd` against `/proc/net/tcp{,6}`.
///
/// The daemon runs in process (`ProxyUnderTest`), so its descriptors are the
/// test process's. A plain count of `/proc/self/fd` moves with every other
/// suite running in parallel; attributing sockets by port does not: accepted
/// client sessions have a listener's port as their local port, upstream
/// connections the hostile server's port as their remote port. Listening
/// sockets are left out; the test's own client sockets (remote port = a
/// listener's) are not counted either.
struct DaemonSocketCensus: Equatable, CustomStringConvertible {
    var clientSessions: Int
    var upstreamConnections: Int

    var total: Int { clientSessions + upstreamConnections }
    var description: String { "\(clientSessions) client session(s), \(upstreamConnections) upstream connection(s)" }

    static func take(listenerPorts: Set<UInt16>, upstreamPort: UInt16) -> DaemonSocketCensus {
        let inodes = socketInodes()
        var census = DaemonSocketCensus(clientSessions: 0, upstreamConnections: 0)
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = readProcFile(table) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, fields[3] != "0A", inodes.contains(String(fields[9])) else { continue }
                if let local = port(of: fields[1]), listenerPorts.contains(local) { census.clientSessions += 1 }
                if let remote = port(of: fields[2]), remote == upstreamPort { census.upstreamConnections += 1 }
            }
        }
        return census
    }

    /// Polls until no client session and at most `pooled` upstream
    /// connections are left, or `timeout` passes; returns the last census.
    static func waitUntilEmpty(listenerPorts: Set<UInt16>, upstreamPort: UInt16, pooled: Int = 0,
                               timeout: TimeInterval = 3) -> DaemonSocketCensus {
        eventually(timeout: timeout, interval: 0.025, { take(listenerPorts: listenerPorts, upstreamPort: upstreamPort) },
                   until: { $0.clientSessions == 0 && $0.upstreamConnections <= pooled })
    }

    private static func socketInodes() -> Set<String> {
        var inodes = Set<String>()
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for entry in entries {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry),
                  target.hasPrefix("socket:[") else { continue }
            inodes.insert(String(target.dropFirst("socket:[".count).dropLast()))
        }
        return inodes
    }

    /// Reads a procfs file to its end with read(2): these files report size 0,
    /// and a reader that trusts the size sees only the first page.
    private static func readProcFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// `0100007F:1F90` → 8080 (the port is hexadecimal after the colon).
    private static func port(of address: Substring) -> UInt16? {
        guard let colon = address.lastIndex(of: ":") else { return nil }
        return UInt16(address[address.index(after: colon)...], radix: 16)
    }
}
