// Socket constants (SOCK_STREAM, MSG_NOSIGNAL …) through the libevent
// module, whose shim includes the libc socket headers first: which C module
// owns those declarations depends on how a build batches its files, and
// through Foundation alone they were missing in some builds.
internal import CLibevent
import Foundation
import PinproxyCore

/// `pinproxy status`'s side of the admin listener: one blocking
/// `GET` over loopback, bounded in time and size.
public enum AdminClient {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The body of `GET path` from the admin listener at `address`.
    public static func get(_ path: String, from address: Endpoint, timeout: TimeInterval = 5,
                           maxBytes: Int = 16 << 20) throws(Failure) -> [UInt8] {
        let ip = address.host.value == "localhost" ? "127.0.0.1" : address.host.value
        guard let socketAddress = SocketAddress(ip: ip, port: address.port) else {
            throw Failure(description: "\(address) is not an IP address")
        }
        let fd = socket(socketAddress.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: 0)
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            _ = setsockopt(fd, SOL_SOCKET, option, &limit, socklen_t(MemoryLayout<timeval>.size))
        }
        guard socketAddress.withSockaddr({ connect(fd, $0, $1) }) == 0 else {
            throw Failure(description: "cannot connect to the admin listener \(address): \(String(cString: strerror(errno)))"
                + " (is pinproxy running with this configuration?)")
        }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(address)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            throw Failure(description: "cannot send to the admin listener \(address): \(String(cString: strerror(errno)))")
        }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while response.count <= maxBytes {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { break }
            guard count > 0 else {
                throw Failure(description: "reading from the admin listener \(address): \(String(cString: strerror(errno)))")
            }
            response += chunk[..<count]
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        guard response.count >= 4,
              let end = (0...(response.count - 4)).first(where: { response[$0..<($0 + 4)].elementsEqual(separator) }) else {
            throw Failure(description: "the admin listener \(address) sent no complete response")
        }
        let statusLine = String(decoding: response[..<end], as: UTF8.self).split(separator: "\r\n").first ?? ""
        let body = Array(response[(end + 4)...])
        guard statusLine.hasPrefix("HTTP/1.1 200") else {
            throw Failure(description: "the admin listener \(address) answered \(statusLine): \(String(decoding: body, as: UTF8.self))")
        }
        return body
    }
}
