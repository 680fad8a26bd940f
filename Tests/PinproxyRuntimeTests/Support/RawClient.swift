import Foundation

/// A client socket the test drives byte by byte, for the misbehaviours curl
/// cannot produce: slow heads, half-close, vanishing mid-transfer, idle holds.
final class RawClient {
    /// How a read ended.
    enum Ending: Equatable { case closed, reset, timedOut }

    private(set) var descriptor: Int32

    /// `receiveBuffer` (SO_RCVBUF, set before the connect, so the kernel
    /// neither grows it nor offers a larger window): how much a client that
    /// stops reading lets the kernel hold for it, so that the rest waits in
    /// pinproxy.
    init(port: UInt16, receiveBuffer: Int32? = nil) throws {
        switch Self.connect(port: port, receiveBuffer: receiveBuffer) {
        case .success(let descriptor): self.descriptor = descriptor
        case .failure(let error): throw TestFailure("connect to 127.0.0.1:\(port) failed: errno \(error.code.rawValue)")
        }
    }

    /// errno of a TCP connect to 127.0.0.1:`port`, 0 when it connected (the
    /// connection is closed again at once).
    static func connectError(port: UInt16) -> Int32 {
        switch connect(port: port) {
        case .success(let descriptor):
            Glibc.close(descriptor)
            return 0
        case .failure(let error):
            return error.code.rawValue
        }
    }

    private static func connect(port: UInt16, receiveBuffer: Int32? = nil) -> Result<Int32, POSIXError> {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let error = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            Glibc.close(descriptor)
            return .failure(error)
        }
        return .success(descriptor)
    }

    deinit { close() }

    /// Sends everything; false once the peer is gone (no SIGPIPE).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Half-close: the request is complete, the answer is still wanted.
    func shutdownWrite() { _ = Glibc.shutdown(descriptor, Int32(SHUT_WR)) }

    /// True when a read would not block within `timeout` (data, EOF or error);
    /// a signal is no answer (`SocketWait`).
    func isReadable(within timeout: TimeInterval) -> Bool {
        SocketWait.readable(descriptor, within: timeout)
    }

    /// Reads until the server closes, resets, `limit` bytes arrived, or `timeout` passes.
    func read(upTo limit: Int = .max, timeout: TimeInterval = 10) -> (data: Data, ending: Ending) {
        let deadline = Date().addingTimeInterval(timeout)
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while received.count < limit {
            let left = deadline.timeIntervalSinceNow
            guard left > 0, isReadable(within: left) else { return (received, .timedOut) }
            let count = SocketWait.receive(descriptor, into: &buffer, atMost: min(buffer.count, limit - received.count))
            if count == 0 { return (received, .closed) }
            if count < 0 { return (received, errno == ECONNRESET ? .reset : .closed) }
            received.append(contentsOf: buffer[0..<count])
        }
        return (received, .timedOut)
    }

    /// Waits up to `timeout` for bytes and returns what one `recv` gives:
    /// nil ending while the connection is open (even when nothing came).
    func readSome(timeout: TimeInterval) -> (data: [UInt8], ending: Ending?) {
        guard isReadable(within: timeout) else { return ([], nil) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = SocketWait.receive(descriptor, into: &buffer, atMost: buffer.count)
        if count == 0 { return ([], .closed) }
        if count < 0 { return ([], errno == ECONNRESET ? .reset : .closed) }
        return (Array(buffer[0..<count]), nil)
    }

    func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }

    /// Closes with SO_LINGER 0: the peer sees a reset, as from a crashed client.
    func reset() {
        guard descriptor >= 0 else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }
}
