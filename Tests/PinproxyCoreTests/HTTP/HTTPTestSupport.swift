@testable import PinproxyCore

/// Helpers shared by the HTTP suites: run the byte-level APIs on test text.
enum HTTPTestSupport {
    static func parseRequest(_ bytes: [UInt8], limits: HeadLimits = HeadLimits()) -> HeadParseResult<HTTPRequestHead> {
        bytes.withUnsafeBytes { RequestHeadParser.parse($0, limits: limits) }
    }

    static func parseRequest(_ text: String, limits: HeadLimits = HeadLimits()) -> HeadParseResult<HTTPRequestHead> {
        parseRequest(Array(text.utf8), limits: limits)
    }

    static func parseResponse(_ text: String, method: String = "GET",
                              limits: HeadLimits = HeadLimits()) -> HeadParseResult<HTTPResponseHead> {
        Array(text.utf8).withUnsafeBytes { ResponseHeadParser.parse($0, requestMethod: method, limits: limits) }
    }

    /// The head of a request that must parse; nil (and the test fails at `#require`) otherwise.
    static func requestHead(_ text: String) -> HTTPRequestHead? {
        if case .complete(let head, _) = parseRequest(text) { return head }
        return nil
    }

    static func responseHead(_ text: String, method: String = "GET") -> HTTPResponseHead? {
        if case .complete(let head, _) = parseResponse(text, method: method) { return head }
        return nil
    }

    /// The status of an `.invalid` result, nil for any other result.
    static func status<Head>(_ result: HeadParseResult<Head>) -> Int? {
        if case .invalid(let error) = result { return error.status }
        return nil
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}
