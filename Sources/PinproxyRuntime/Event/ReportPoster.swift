internal import CLibevent
import Foundation

/// Sends one HTTP POST (a pin failure report) and forgets it: libevent's
/// evhttp client on the loop, names resolved by the loop's evdns, the
/// connection freed by libevent when the request completes or times out.
/// A report is best effort by nature (RFC 7469 §3): failures are logged at
/// debug level and never touch the request that caused them.
enum ReportPoster {
    static func post(_ body: [UInt8], to uri: String, loop: EventLoop, resolver: DNSResolver, logger: Logger) {
        guard let parsed = evhttp_uri_parse(uri) else {
            logger.log(.warning, "report", "cannot parse report_uri \(uri)")
            return
        }
        defer { evhttp_uri_free(parsed) }
        guard let hostPointer = evhttp_uri_get_host(parsed) else { return }
        let host = String(cString: hostPointer)
        let port = evhttp_uri_get_port(parsed)
        var path = evhttp_uri_get_path(parsed).map { String(cString: $0) } ?? "/"
        if path.isEmpty { path = "/" }
        if let query = evhttp_uri_get_query(parsed) { path += "?" + String(cString: query) }
        guard let connection = evhttp_connection_base_new(loop.base, resolver.dnsBase, host,
                                                          UInt16(port > 0 ? port : 80)) else { return }
        evhttp_connection_set_timeout(connection, 5)
        // No context: the report's outcome changes nothing.
        guard let request = evhttp_request_new(ReportPoster.completion, nil) else {
            evhttp_connection_free(connection)
            return
        }
        let headers = evhttp_request_get_output_headers(request)
        evhttp_add_header(headers, "Host", port > 0 ? "\(host):\(port)" : host)
        evhttp_add_header(headers, "Content-Type", "application/json")
        evhttp_add_header(headers, "Connection", "close")
        _ = body.withUnsafeBytes { evbuffer_add(evhttp_request_get_output_buffer(request), $0.baseAddress, $0.count) }
        // On success libevent owns the request; the connection frees itself afterwards.
        if evhttp_make_request(connection, request, EVHTTP_REQ_POST, path) == 0 {
            evhttp_connection_free_on_completion(connection)
        } else {
            evhttp_connection_free(connection)
            logger.log(.debug, "report", "cannot send a report to \(uri)")
        }
    }

    private static let completion: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, _ in }
}
