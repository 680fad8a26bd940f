// Socket constants (SOCK_STREAM, MSG_NOSIGNAL …) through the libevent
// module, whose shim includes the libc socket headers first: which C module
// owns those declarations depends on how a build batches its files, and
// through Foundation alone they were missing in some builds.
internal import CLibevent
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// sd_notify(3) without libsystemd: state changes sent as datagrams over an
/// `AF_UNIX`/`SOCK_DGRAM` socket to `$NOTIFY_SOCKET` (SPEC §5).
///
/// Why no libsystemd: the protocol is one datagram of `KEY=VALUE` lines, and a
/// dependency for that would be a dependency for nothing (ghostunnel does the same).
///
/// Invariants: exists only when `NOTIFY_SOCKET` names a usable address (a
/// filesystem path, or an abstract name when it starts with "@"); sending never
/// raises SIGPIPE and never throws — a lost notification is logged by the
/// caller at most, it is not a reason to stop serving.
public final class SystemdNotifier: @unchecked Sendable {
    /// `$NOTIFY_SOCKET` as given.
    public let socketPath: String
    private let descriptor: Int32
    private let address: sockaddr_un
    private let addressLength: socklen_t

    /// nil when `NOTIFY_SOCKET` is unset, empty, longer than `sun_path`, or no
    /// datagram socket can be created.
    public init?(environment: [String: String]) {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let isAbstract = bytes.first == UInt8(ascii: "@")
        // An abstract name is the path with its "@" replaced by NUL, and is not NUL-terminated.
        if isAbstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count + (isAbstract ? 0 : 1) <= capacity else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        self.socketPath = path
        self.descriptor = descriptor
        self.address = address
        self.addressLength = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (isAbstract ? 0 : 1))
    }

    deinit {
        Glibc.close(descriptor)
    }

    /// Sends `fields` (each `KEY=VALUE`) joined with "\n" as one datagram.
    /// - Returns: whether the whole datagram was sent.
    @discardableResult
    public func notify(_ fields: [String]) -> Bool {
        let message = Array(fields.joined(separator: "\n").utf8)
        var target = address
        let sent = message.withUnsafeBytes { raw in
            withUnsafePointer(to: &target) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    sendto(descriptor, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL), socketAddress, addressLength)
                }
            }
        }
        return sent == message.count
    }

    /// Every listener is bound and the daemon serves.
    @discardableResult
    public func ready(status: String? = nil) -> Bool {
        notify(["READY=1"] + (status.map { ["STATUS=\($0)"] } ?? []))
    }

    /// A reload starts; systemd needs the monotonic time to order it against the
    /// matching `READY=1` (systemd.service(5), `Type=notify-reload`).
    @discardableResult
    public func reloading(monotonicMicroseconds: UInt64 = SystemdNotifier.monotonicMicroseconds()) -> Bool {
        notify(["RELOADING=1", "MONOTONIC_USEC=\(monotonicMicroseconds)"])
    }

    /// Shutdown has begun (sent before draining, as ghostunnel does).
    @discardableResult
    public func stopping() -> Bool {
        notify(["STOPPING=1"])
    }

    /// A free-form line for `systemctl status`.
    @discardableResult
    public func status(_ text: String) -> Bool {
        notify(["STATUS=" + text.replacingOccurrences(of: "\n", with: " ")])
    }

    /// The event loop is alive; to be sent every `watchdogInterval`.
    @discardableResult
    public func watchdog() -> Bool {
        notify(["WATCHDOG=1"])
    }

    /// `CLOCK_MONOTONIC` in microseconds, the clock systemd's `MONOTONIC_USEC` is read on.
    public static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }

    /// How often to send `WATCHDOG=1`: half of `WATCHDOG_USEC` (sd_watchdog_enabled(3)
    /// recommends pinging at half the timeout), or nil when the watchdog is off or
    /// `WATCHDOG_PID` names another process.
    public static func watchdogInterval(environment: [String: String]) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"], Int32(pid) != getpid() { return nil }
        return .microseconds(Int64(clamping: usec / 2))
    }
}
