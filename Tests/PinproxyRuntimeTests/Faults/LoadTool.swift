import Foundation

/// The load generators in Tests/Tools (p2_load.py, p2_many.py): run to their
/// end, bounded, each printing one JSON object of counts.
enum LoadTool {
    static func run(_ script: String, _ arguments: [String], timeout: TimeInterval) throws -> [String: Any] {
        let result = try ChildProcess.run("/usr/bin/env", ["python3", ToolPaths.tool(script)] + arguments, timeout: timeout)
        guard let object = try? JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any] else {
            throw TestFailure("\(script) printed no result (exit \(result.status)): \(result.output)\(result.errorOutput)")
        }
        return object
    }
}
