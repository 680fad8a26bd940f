import Foundation

/// One response as a plain client reads it off a `RawClient`, with a parser of
/// the test's own (not pinproxy's): the status line, the fields, and a body
/// framed by Content-Length, chunked, or the close. Interim (1xx) responses
/// are collected and skipped.
struct RawHTTPResponse {
    var status: Int
    var fields: [(name: String, value: String)]
    var body: [UInt8]
    var interim: [Int]

    func values(_ name: String) -> [String] {
        fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object (the recording origin's answers).
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]) ?? [:] }

    /// Reads the next final response; nil when the connection ends or `timeout` passes first.
    /// Bytes after it stay in `pending` for the next call.
    static func read(from client: RawClient, pending: inout [UInt8], method: String = "GET",
                     timeout: TimeInterval = 10) -> RawHTTPResponse? {
        let deadline = Date().addingTimeInterval(timeout)
        var closed = false
        func fill() -> Bool {
            guard !closed else { return false }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            let (data, ending) = client.readSome(timeout: left)
            pending += data
            if ending != nil { closed = true }
            return !data.isEmpty
        }
        var interim: [Int] = []
        while true {
            guard let headEnd = find([13, 10, 13, 10], in: pending) else {
                guard fill() else { return nil }
                continue
            }
            let head = String(decoding: pending[..<headEnd], as: UTF8.self)
            var lines = head.components(separatedBy: "\r\n")
            let statusParts = lines.removeFirst().split(separator: " ", maxSplits: 2)
            guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
            let fields = lines.map { line -> (String, String) in
                let parts = line.split(separator: ":", maxSplits: 1)
                return (String(parts[0]), parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
            }
            pending.removeFirst(headEnd + 4)
            if status < 200 { interim.append(status); continue }
            var response = RawHTTPResponse(status: status, fields: fields, body: [], interim: interim)
            // RFC 9110 §6.4.1: a 2xx to CONNECT has no content; the tunnel's bytes follow.
            let noBody = method == "HEAD" || status == 204 || status == 304
                || (method == "CONNECT" && (200..<300).contains(status))
            if noBody { return response }
            if response.values("transfer-encoding").contains(where: { $0.lowercased().contains("chunked") }) {
                while true {
                    guard let lineEnd = find([13, 10], in: pending) else { guard fill() else { return nil }; continue }
                    let sizeText = String(decoding: pending[..<lineEnd], as: UTF8.self).split(separator: ";")[0]
                    guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return nil }
                    if size == 0 {
                        guard let end = find([13, 10, 13, 10], in: pending, from: lineEnd) else {
                            guard fill() else { return nil }
                            continue
                        }
                        pending.removeFirst(end + 4)
                        return response
                    }
                    guard pending.count >= lineEnd + 2 + size + 2 else { guard fill() else { return nil }; continue }
                    response.body += pending[(lineEnd + 2)..<(lineEnd + 2 + size)]
                    pending.removeFirst(lineEnd + 2 + size + 2)
                }
            }
            if let length = response.values("content-length").first.flatMap({ Int($0) }) {
                while pending.count < length { guard fill() else { return nil } }
                response.body = Array(pending[..<length])
                pending.removeFirst(length)
                return response
            }
            while fill() {}
            response.body = pending
            pending = []
            return response
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int = 0) -> Int? {
        guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        for index in start...(haystack.count - needle.count) where haystack[index..<(index + needle.count)].elementsEqual(needle) {
            return index
        }
        return nil
    }
}
