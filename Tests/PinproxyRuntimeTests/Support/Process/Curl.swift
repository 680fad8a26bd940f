import Foundation

/// Runs the real curl binary and captures status, headers and body.
enum Curl {
    struct Result {
        var exitCode: Int32
        var status: Int
        var headers: [String: String]
        var body: Data
        var bodyText: String { String(decoding: body, as: UTF8.self) }
        func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    /// `arguments` are curl's; `-s -S -D` are added to capture the last response head.
    static func run(_ arguments: [String], timeout: TimeInterval = 30) throws -> Result {
        let directory = try TemporaryDirectory()
        let headerFile = directory.file("head"), bodyFile = directory.file("body")
        // curl's own --max-time ends it; the launcher's bound is only a backstop.
        let curl = try ChildProcess.run("/usr/bin/curl", ["-s", "-S", "--max-time", String(Int(timeout)),
                                                          "-D", headerFile, "-o", bodyFile] + arguments,
                                        timeout: timeout + 10)
        let headText = contents(of: headerFile)
        // With several responses (100 Continue, several URLs) the last head counts.
        let heads = headText.components(separatedBy: "\r\n\r\n").filter { !$0.isEmpty }
        var status = 0
        var headers: [String: String] = [:]
        if let last = heads.last {
            let lines = last.components(separatedBy: "\r\n")
            status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        let body = (try? Data(contentsOf: URL(fileURLWithPath: bodyFile))) ?? Data()
        return Result(exitCode: curl.status, status: status, headers: headers, body: body)
    }
}
