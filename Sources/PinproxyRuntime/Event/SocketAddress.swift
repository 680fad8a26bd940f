// Socket declarations through the libevent module, whose shim includes the
// libc socket headers first: which C module owns those declarations depends
// on the build (WMO or batches), and through Foundation alone they were
// missing in some builds.
internal import CLibevent
import Foundation
import PinproxyCore

/// A resolved IPv4 or IPv6 socket address.
///
/// Held in a `sockaddr_in6` (28 bytes, which a `sockaddr_in` fits in), not a
/// 128-byte `sockaddr_storage`: every client connection keeps one.
struct SocketAddress: Sendable, CustomStringConvertible {
    private var storage: sockaddr_in6
    let length: socklen_t

    /// Copies the IPv4 or IPv6 address in `storage` (as `getsockname` fills it).
    init(storage: sockaddr_storage, length: socklen_t) {
        var compact = sockaddr_in6()
        let count = min(Int(length), MemoryLayout<sockaddr_in6>.size)
        withUnsafeBytes(of: storage) { source in
            withUnsafeMutableBytes(of: &compact) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[..<count])) }
        }
        self.storage = compact
        self.length = socklen_t(count)
    }

    /// Copies a kernel-provided address; nil for families other than IPv4/IPv6.
    init?(_ pointer: UnsafePointer<sockaddr>, length: socklen_t) {
        guard pointer.pointee.sa_family == sa_family_t(AF_INET) || pointer.pointee.sa_family == sa_family_t(AF_INET6),
              Int(length) <= MemoryLayout<sockaddr_in6>.size else { return nil }
        var compact = sockaddr_in6()
        withUnsafeMutableBytes(of: &compact) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: Int(length)))
        }
        storage = compact
        self.length = length
    }

    /// Parses a numeric IP literal (no brackets) and a port; nil for names.
    init?(ip: String, port: UInt16) {
        var compact = sockaddr_in6()
        if ip.contains(":") {
            compact.sin6_family = sa_family_t(AF_INET6)
            compact.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, ip, &compact.sin6_addr) == 1 else { return nil }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            guard inet_pton(AF_INET, ip, &address.sin_addr) == 1 else { return nil }
            withUnsafeMutableBytes(of: &compact) { $0.storeBytes(of: address, as: sockaddr_in.self) }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        }
        storage = compact
    }

    var family: Int32 { Int32(storage.sin6_family) }

    var port: UInt16 {
        withUnsafeBytes(of: storage) { raw in
            family == AF_INET6 ? UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
                               : UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
        }
    }

    /// The address without port, numeric.
    var ip: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        withUnsafeBytes(of: storage) { raw in
            if family == AF_INET6 {
                var address = raw.load(as: sockaddr_in6.self).sin6_addr
                _ = inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
            } else {
                var address = raw.load(as: sockaddr_in.self).sin_addr
                _ = inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count))
            }
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `ip:port`, IPv6 in brackets, as in logs and the violation log.
    var description: String { family == AF_INET6 ? "[\(ip)]:\(port)" : "\(ip):\(port)" }

    /// Calls `body` with the address as a `sockaddr` pointer.
    func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
    }
}
