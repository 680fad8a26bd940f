internal import CLibevent
import Foundation

/// Asynchronous name resolution on one event loop (evdns), honouring
/// /etc/hosts and the nameservers of resolv.conf.
///
/// `PINPROXY_RESOLV_CONF` names another resolv.conf; tests use it to point the
/// resolver at a loopback DNS server they run, so no query leaves the machine.
final class DNSResolver {
    let dnsBase: OpaquePointer
    /// Keeps the loop (its event_base) alive as long as this object's event.
    private let loop: EventLoop

    /// libevent's resolver prints its own diagnostics to stderr; route them
    /// through the logger (at debug: a failed lookup is reported per request).
    private static let logRouting: Void = {
        evdns_set_log_fn { _, message in
            guard let message else { return }
            Logger.shared.log(.debug, "dns", String(cString: message))
        }
        event_set_log_callback { severity, message in
            guard let message else { return }
            Logger.shared.log(severity >= EVENT_LOG_WARN ? .warning : .debug, "libevent", String(cString: message))
        }
    }()

    init(loop: EventLoop, resolvConf: String?) throws {
        _ = DNSResolver.logRouting
        // DISABLE_WHEN_INACTIVE: an idle resolver must not keep the loop alive.
        guard let dnsBase = evdns_base_new(loop.base, Int32(EVDNS_BASE_DISABLE_WHEN_INACTIVE)) else {
            throw RuntimeError.system("evdns_base_new", errno)
        }
        self.dnsBase = dnsBase
        self.loop = loop
        // No DNS_OPTION_SEARCH: an upstream name is looked up as written, never with search suffixes.
        // A missing resolv.conf still leaves /etc/hosts and libevent's default
        // (127.0.0.1) in place; a lookup then fails with dns_error, which is the truth.
        _ = evdns_base_resolv_conf_parse(dnsBase, DNS_OPTION_NAMESERVERS | DNS_OPTION_MISC | DNS_OPTION_HOSTSFILE, resolvConf ?? "/etc/resolv.conf")
        _ = evdns_base_set_option(dnsBase, "timeout:", "2")
        _ = evdns_base_set_option(dnsBase, "attempts:", "2")
    }

    deinit {
        // fail_requests = 1: pending lookups get EVUTIL_EAI_CANCEL, releasing their context.
        evdns_base_free(dnsBase, 1)
    }

    /// Resolves `host` to TCP addresses in the resolver's order. `completion`
    /// runs exactly once on the loop, possibly before this method returns
    /// (numeric hosts and /etc/hosts answer synchronously), unless the lookup
    /// is cancelled first, in which case it never runs.
    @discardableResult
    func resolve(host: String, port: UInt16,
                 completion: @escaping (Result<[SocketAddress], DNSFailure>) -> Void) -> DNSLookup {
        let lookup = DNSLookup(completion: completion)
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        hints.ai_flags = EVUTIL_AI_ADDRCONFIG
        // Context: retained here, released in the callback, which libevent
        // calls exactly once (with EVUTIL_EAI_CANCEL when cancelled or freed).
        let context = Unmanaged.passRetained(lookup).toOpaque()
        let request = evdns_getaddrinfo(dnsBase, host, String(port), &hints, DNSResolver.trampoline, context)
        if !lookup.isFinished { lookup.request = request }
        return lookup
    }

    private static let trampoline: evdns_getaddrinfo_cb = { result, info, context in
        guard let context else { return }
        let lookup = Unmanaged<DNSLookup>.fromOpaque(context).takeRetainedValue()
        defer { if let info { evutil_freeaddrinfo(info) } }
        lookup.didFinish(result: result, info: info)
    }
}

/// Why a name could not be resolved.
enum DNSFailure: Error, Equatable {
    case notFound(String)
    case failed(String)
}

/// One pending lookup; `cancel()` guarantees the completion never runs.
final class DNSLookup {
    fileprivate var request: OpaquePointer?
    private var completion: ((Result<[SocketAddress], DNSFailure>) -> Void)?
    fileprivate private(set) var isFinished = false

    fileprivate init(completion: @escaping (Result<[SocketAddress], DNSFailure>) -> Void) {
        self.completion = completion
    }

    func cancel() {
        completion = nil
        if let request, !isFinished { evdns_getaddrinfo_cancel(request) }
        request = nil
    }

    fileprivate func didFinish(result: Int32, info: UnsafeMutablePointer<addrinfo>?) {
        isFinished = true
        request = nil
        guard let completion else { return }
        self.completion = nil
        if result == EVUTIL_EAI_CANCEL { return }
        guard result == 0 else {
            let text = String(cString: evutil_gai_strerror(result))
            completion(.failure(result == EVUTIL_EAI_NONAME ? .notFound(text) : .failed(text)))
            return
        }
        var addresses: [SocketAddress] = []
        var node = info
        while let current = node {
            if let address = current.pointee.ai_addr, let parsed = SocketAddress(address, length: current.pointee.ai_addrlen) {
                addresses.append(parsed)
            }
            node = current.pointee.ai_next
        }
        completion(addresses.isEmpty ? .failure(.notFound("no addresses")) : .success(addresses))
    }
}
