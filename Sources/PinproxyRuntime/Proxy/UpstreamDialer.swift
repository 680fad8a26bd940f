import Foundation
import PinproxyCore

/// One TCP connection to an upstream name: resolve (honouring a `resolve`
/// override and IP literals), then connect to each address in resolver order
/// until one answers (SPEC §3). Reports exactly once, on the loop, never from
/// inside `init`, unless cancelled. What runs over the socket is the caller's:
/// TLS with the policy's check (`UpstreamConnector`) or a blind tunnel.
final class UpstreamDialer {
    private let target: Endpoint
    private let loop: EventLoop
    private let connectTimeout: Duration
    private var completion: ((Result<(descriptor: Int32, peer: SocketAddress), UpstreamFailure>) -> Void)?
    private var lookup: DNSLookup?
    private var socketConnector: SocketConnector?
    private var addresses: [SocketAddress] = []
    private var lastFailure = UpstreamFailure.refused("no address")

    init(loop: EventLoop, resolver: DNSResolver, target: Endpoint, connectTo override: Endpoint?, connectTimeout: Duration,
         completion: @escaping (Result<(descriptor: Int32, peer: SocketAddress), UpstreamFailure>) -> Void) {
        self.loop = loop
        self.target = target
        self.connectTimeout = connectTimeout
        self.completion = completion
        let destination = override ?? target
        if destination.host.isIPAddress, let address = SocketAddress(ip: destination.host.value, port: destination.port) {
            addresses = [address]
            // Deferred so that the caller never sees its completion run inside init.
            let dialer = LoopBound(Weak(self))
            loop.execute { dialer.value.object?.connectNext() }
        } else {
            lookup = resolver.resolve(host: destination.host.value, port: destination.port) { [weak self] result in
                self?.didResolve(result)
            }
        }
    }

    deinit { cancel() }

    /// Abandons the attempt; the completion never runs and no socket is left open.
    func cancel() {
        completion = nil
        lookup?.cancel()
        lookup = nil
        socketConnector?.cancel()
        socketConnector = nil
    }

    private func didResolve(_ result: Result<[SocketAddress], DNSFailure>) {
        lookup = nil
        switch result {
        case let .success(found):
            addresses = found
            connectNext()
        case let .failure(.notFound(text)), let .failure(.failed(text)):
            finish(.failure(.dns("\(target.host): \(text)")))
        }
    }

    private func connectNext() {
        guard completion != nil else { return }
        guard !addresses.isEmpty else { return finish(.failure(lastFailure)) }
        let address = addresses.removeFirst()
        socketConnector = SocketConnector(loop: loop, address: address, timeout: connectTimeout) { [weak self] result in
            self?.didConnect(result, to: address)
        }
    }

    private func didConnect(_ result: Result<Int32, SocketConnector.Failure>, to address: SocketAddress) {
        socketConnector = nil
        switch result {
        case let .failure(.refused(code)):
            lastFailure = .refused("\(address): \(String(cString: strerror(code)))")
            connectNext()
        case .failure(.timedOut):
            lastFailure = .timedOut("connect to \(address) timed out")
            connectNext()
        case let .success(descriptor):
            guard let completion else { Glibc.close(descriptor); return }
            self.completion = nil
            completion(.success((descriptor, address)))
        }
    }

    private func finish(_ result: Result<(descriptor: Int32, peer: SocketAddress), UpstreamFailure>) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
