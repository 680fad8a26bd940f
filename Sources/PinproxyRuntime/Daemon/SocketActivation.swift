// Socket declarations through the libevent module, whose shim includes the
// libc socket headers first: which C module owns those declarations depends
// on the build (WMO or batches), and through Foundation alone they were
// missing in some builds.
internal import CLibevent
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A listening socket passed in by systemd socket activation (`pinproxy.socket`).
public struct InheritedSocket: Sendable, Equatable {
    /// The descriptor, numbered from 3 (`SD_LISTEN_FDS_START`).
    public let fd: Int32
    /// Its `FileDescriptorName=` from `LISTEN_FDNAMES`, when systemd sent names.
    public let name: String?
    /// The bound address as a listener key: `127.0.0.1:8080`, `[::1]:8080`;
    /// nil for a socket that is not IPv4/IPv6 (it matches no listener).
    public let address: String?

    public init(fd: Int32, name: String?, address: String?) {
        self.fd = fd
        self.name = name
        self.address = address
    }
}

/// sd_listen_fds(3) without libsystemd: finds the sockets systemd passed, so the
/// daemon can match them to configured listeners by address (SPEC §5).
///
/// Invariants: returns nothing unless `LISTEN_PID` is this process (the
/// variables may have been inherited by a child that does not own the fds);
/// does not `unsetenv` (the environment is passed in as a value, and mutating
/// the process environment is not thread-safe); marks the descriptors close-on-exec.
public enum SocketActivation {
    /// The inherited listeners, in descriptor order.
    public static func inheritedListeners(environment: [String: String]) -> [InheritedSocket] {
        inheritedListeners(environment: environment, firstDescriptor: 3)
    }

    /// Same, with the first descriptor injectable so a test can place sockets
    /// above the descriptors its own process already holds.
    static func inheritedListeners(environment: [String: String], firstDescriptor: Int32) -> [InheritedSocket] {
        guard let pid = environment["LISTEN_PID"].flatMap({ Int32($0) }), pid == getpid(),
              let count = environment["LISTEN_FDS"].flatMap({ Int32($0) }), count > 0 else { return [] }
        let names = environment["LISTEN_FDNAMES"].map { $0.split(separator: ":", omittingEmptySubsequences: false).map(String.init) } ?? []
        return (0..<count).compactMap { index in
            let fd = firstDescriptor + index
            let flags = fcntl(fd, F_GETFD)
            guard flags >= 0 else { return nil }
            _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC)
            let name = Int(index) < names.count ? names[Int(index)] : nil
            return InheritedSocket(fd: fd, name: name, address: boundAddress(of: fd))
        }
    }

    /// `getsockname` rendered as `ip:port`, IPv6 in brackets (the listener syntax of SPEC §2).
    static func boundAddress(of fd: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch Int32(storage.ss_family) {
        case AF_INET:
            var address = withUnsafeBytes(of: storage) { $0.loadUnaligned(as: sockaddr_in.self) }
            guard inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count)) != nil else { return nil }
            return "\(Self.string(text)):\(UInt16(bigEndian: address.sin_port))"
        case AF_INET6:
            var address = withUnsafeBytes(of: storage) { $0.loadUnaligned(as: sockaddr_in6.self) }
            guard inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count)) != nil else { return nil }
            return "[\(Self.string(text))]:\(UInt16(bigEndian: address.sin6_port))"
        default:
            return nil
        }
    }

    private static func string(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
