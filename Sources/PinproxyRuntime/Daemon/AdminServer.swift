import Foundation
import PinproxyCore

/// The admin listener (SPEC §6): `GET /metrics` and `GET /status` on a
/// loopback address, on loop 0. Read-only: nothing it serves changes state.
/// Each connection is one request and one answer, then closed; a head is
/// bounded in size and time, and the connections at once in number, so a
/// hostile local client costs at most a few kilobytes and a timer.
final class AdminServer {
    static let maxConnections = 32
    static let maxHeadBytes = 8192
    static let headTimeout = EventTimeout(.seconds(5))

    private let loop: EventLoop
    private let socket: ListeningSocket
    private var listener: Listener?
    private var connections: [ObjectIdentifier: AdminConnection] = [:]
    private let answer: (HTTPRequestHead) -> AdminAnswer
    private let logger: Logger

    /// `answer` runs on the loop for each complete request head.
    init(loop: EventLoop, address: SocketAddress, logger: Logger,
         answer: @escaping (HTTPRequestHead) -> AdminAnswer) throws {
        self.loop = loop
        self.logger = logger
        self.answer = answer
        socket = try ListeningSocket.bind(address)
        listener = try Listener(
            loop: loop, descriptor: try socket.duplicate(), boundAddress: socket.boundAddress,
            onAccept: { [unowned self] fd, _ in self.accept(fd) },
            onError: { [unowned self] code in
                self.logger.log(.warning, "admin", "accept failed: \(String(cString: strerror(code)))")
            })
    }

    /// The address bound (the port resolved when the config said 0).
    var boundAddress: SocketAddress { socket.boundAddress }

    func close() {
        listener?.close()
        listener = nil
        socket.close()
        connections.values.forEach { $0.close() }
        connections.removeAll()
    }

    private func accept(_ fd: Int32) {
        guard connections.count < Self.maxConnections, let stream = PlainStream(loop: loop, descriptor: fd) else {
            Glibc.close(fd)
            return
        }
        let connection = AdminConnection(stream: stream, answer: answer) { [unowned self] done in
            self.connections[ObjectIdentifier(done)] = nil
        }
        connections[ObjectIdentifier(connection)] = connection
        connection.start()
    }
}

/// What the admin listener sends back for one request.
/// The reason phrase is the status's own (`HTTPStatusReason`), so no answer
/// can pair a status with another's phrase.
struct AdminAnswer {
    var status: Int
    var contentType: String
    var body: [UInt8]
    var extraFields: [(String, String)] = []

    static func text(_ status: Int, _ message: String, extraFields: [(String, String)] = []) -> AdminAnswer {
        AdminAnswer(status: status, contentType: "text/plain; charset=utf-8",
                    body: Array((message + "\n").utf8), extraFields: extraFields)
    }

    /// The whole response; HEAD gets the head only (RFC 9110 §9.3.2).
    func serialise(headOnly: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(HTTPStatusReason.phrase(for: status))\r\n"
        head += "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n"
        head += "Cache-Control: no-store\r\nConnection: close\r\n"
        for (name, value) in extraFields { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + (headOnly ? [] : body)
    }
}

/// One admin client: reads one head, writes the answer, closes.
final class AdminConnection: ByteStreamDelegate {
    private let stream: PlainStream
    private let answer: (HTTPRequestHead) -> AdminAnswer
    private var onClose: ((AdminConnection) -> Void)?
    private var answered = false

    init(stream: PlainStream, answer: @escaping (HTTPRequestHead) -> AdminAnswer,
         onClose: @escaping (AdminConnection) -> Void) {
        self.stream = stream
        self.answer = answer
        self.onClose = onClose
    }

    func start() {
        stream.delegate = self
        stream.setReadHighWatermark(AdminServer.maxHeadBytes + 1)
        stream.setWriteTimeout(AdminServer.headTimeout)
        stream.startReading(timeout: AdminServer.headTimeout)
    }

    func close() {
        stream.close()
        let onClose = self.onClose
        self.onClose = nil
        onClose?(self)
    }

    func streamDidRead(_ stream: ByteStream) {
        guard !answered else { return stream.input.drain(stream.input.count) }
        let limits = HeadLimits(maxHeaderBytes: AdminServer.maxHeadBytes, maxTargetBytes: 2048)
        let result = stream.input.withContiguousPrefix(count: AdminServer.maxHeadBytes + 1) {
            RequestHeadParser.parse($0, limits: limits)
        }
        switch result {
        case .incomplete:
            if stream.input.count > AdminServer.maxHeadBytes {
                send(.text(431, "request head too large"), headOnly: false)
            }
        case let .invalid(error):
            send(.text(error.status, "malformed request: \(error.reason)"), headOnly: false)
        case let .complete(head, _):
            send(answer(head), headOnly: head.method == "HEAD")
        }
    }

    private func send(_ response: AdminAnswer, headOnly: Bool) {
        answered = true
        stream.stopReading()
        stream.write(response.serialise(headOnly: headOnly))
        stream.flush()
        if stream.output.isEmpty { close() }
    }

    func streamDidDrain(_ stream: ByteStream) {
        if answered && stream.output.isEmpty { close() }
    }

    func stream(_ stream: ByteStream, didEnd ending: StreamEnd) { close() }
}
