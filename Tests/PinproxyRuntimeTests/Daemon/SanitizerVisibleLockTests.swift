import Foundation
import Testing

/// Every lock that threads share is `Locked` (an `NSLock`), never
/// `Synchronization.Mutex`: the standard library is not built with the
/// thread sanitizer, so the ordering a `Mutex` gives is invisible to the
/// sanitizer pass of `make test`, which then fails on a race that is none
/// (seen in `PreparedPolicy.check`, two loops building a rule's check on
/// their first handshakes). A `Mutex` slips in easily; this keeps the class closed.
@Suite("Locks the thread sanitizer can see")
struct SanitizerVisibleLockTests {
    @Test("no Synchronization.Mutex in Sources or Tests: every shared lock is Locked")
    func noMutex() throws {
        let root = ToolPaths.repositoryRoot
        // The type, generic or initialised: `Mutex<…>` or `Mutex(…)`, not a name that ends in it.
        let use = try NSRegularExpression(pattern: #"\bMutex\s*[<(]"#)
        var offenders: [String] = []
        for directory in ["Sources", "Tests"] {
            let files = try FileManager.default.subpathsOfDirectory(atPath: root + "/" + directory)
            for file in files where file.hasSuffix(".swift") {
                let path = directory + "/" + file
                for (index, line) in contents(of: root + "/" + path).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.trimmingCharacters(in: .whitespaces)
                    if code.hasPrefix("//") { continue }
                    let range = NSRange(code.startIndex..., in: code)
                    if use.firstMatch(in: code, range: range) != nil { offenders.append("\(path):\(index + 1): \(code)") }
                }
            }
        }
        #expect(offenders.isEmpty, "use Locked instead:\n\(offenders.joined(separator: "\n"))")
        // The scan itself must have seen the code it guards.
        #expect(contents(of: root + "/Sources/PinproxyRuntime/Proxy/PreparedPolicy.swift").contains("Locked<TrustCheck?>"))
    }
}
