import Foundation
@testable import PinproxyRuntime

/// One recording origin for `api.example.com` and one pinproxy in front of it
/// (a `TestWorld`: forward and gateway listeners, one event loop, the upstream
/// pool on as by default), shared by the desync suites: starting them per test case would
/// cost more than the cases. Suites that use it are `.serialized`, so the
/// pooled upstream connection one case leaves is the one the next request takes.
final class SmugglingBed: @unchecked Sendable {
    static let shared: SmugglingBed = {
        do {
            let bed = try SmugglingBed()
            // A static is never released: its files and the origin go when the test process exits.
            atexit { SmugglingBed.shared.tearDown() }
            return bed
        } catch {
            fatalError("the smuggling test bed did not start: \(error)")
        }
    }()

    private func tearDown() {
        origin.stop()
        try? FileManager.default.removeItem(atPath: world.directory.path)
    }

    let world: TestWorld
    let origin: RecordingOrigin
    let proxy: ProxyUnderTest
    private let counter = Counter()

    private init() throws {
        world = try TestWorld()
        origin = try world.startOrigin()
        world.configuration.threads = 1
        proxy = try world.startProxy()
    }

    /// A fresh number for markers in targets, so each case finds its own requests.
    func nextNumber() -> Int { counter.next() }

    /// Sends `bytes` on a new client connection (forward listener unless `port`
    /// says otherwise) and reads `count` responses; without a count it
    /// half-closes and reads every response until pinproxy closes.
    ///
    /// A response that is due may take `Self.answerTimeout`; the read that
    /// only finds the close (no count) gives up after 5 s.
    func send(_ bytes: [UInt8], port: UInt16? = nil, count: Int? = nil) throws -> [RawHTTPResponse] {
        let client = try RawClient(port: port ?? proxy.forwardPort)
        client.send(bytes)
        if count == nil { client.shutdownWrite() }
        var pending: [UInt8] = []
        var responses: [RawHTTPResponse] = []
        while responses.count < (count ?? .max),
              let response = RawHTTPResponse.read(from: client, pending: &pending, timeout: count == nil ? 5 : Self.answerTimeout) {
            responses.append(response)
        }
        return responses
    }

    /// How long an answer that must come may take. Under AddressSanitizer,
    /// beside the other suites, a canary once had no answer after 5 s (and
    /// 1 s is usual); a missing answer is a failure either way, only later.
    static let answerTimeout: TimeInterval = 20

    /// One GET of `target` on a new connection; its response.
    func get(_ target: String) throws -> RawHTTPResponse? {
        let client = try RawClient(port: proxy.forwardPort)
        client.send("GET http://api.example.com\(target) HTTP/1.1\r\nHost: api.example.com\r\n\r\n")
        var pending: [UInt8] = []
        return RawHTTPResponse.read(from: client, pending: &pending, timeout: Self.answerTimeout)
    }

    /// The origin connection a recorded response came over.
    static func connection(of response: RawHTTPResponse?) -> Int? {
        response.flatMap { $0.values("x-origin-connection").first.flatMap { Int($0) } }
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func next() -> Int { lock.lock(); defer { lock.unlock() }; value += 1; return value }
    }
}
