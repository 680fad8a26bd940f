import Foundation
import PinproxyCore
@testable import PinproxyRuntime

/// A fresh directory (mode 0700) under the system temp dir, removed when released.
/// Private to the interception tests, so they do not depend on shared support files.
final class CAScratch {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "pinproxy-ca-tests-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw CATestFailure("mkdtemp: \(String(cString: strerror(errno)))") }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    @discardableResult
    func write(_ text: String, to name: String, mode: mode_t = 0o644) throws -> String {
        let file = file(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        chmod(file, mode)
        return file
    }
}

struct CATestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs a child process to completion with output captured in files (no pipe
/// to fill up), killed after `timeout`.
enum CAProcess {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var output: String { stdout + stderr }
    }

    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                    directory: String? = nil, timeout: TimeInterval = 120) throws -> Result {
        let scratch = try CAScratch()
        let out = scratch.file("stdout"), err = scratch.file("stderr")
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
                      stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }

    /// The first executable named `tool` on PATH (or the usual system folders).
    static func which(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/local/bin", "/usr/bin", "/bin"]
        return folders.map { $0 + "/" + tool }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// `<repository>/.build/debug/pinproxy`, found from this file's location.
    static let pinproxy: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }  // Interception → PinproxyRuntimeTests → Tests → root
        return url.path + "/.build/debug/pinproxy"
    }()
}

/// A CA made at test time in its own scratch directory.
struct TestCA {
    let scratch: CAScratch
    let directory: String
    let authority: InterceptionAuthority

    init(names: [String], at now: Date = Date()) throws {
        scratch = try CAScratch()
        directory = scratch.file("ca")
        authority = try InterceptionAuthority.create(in: directory, for: InterceptionScope(names: names), at: now)
    }

    func file(_ name: String) -> String { directory + "/" + name }
}

extension FileManager {
    /// The permission bits of `path` (following symlinks), e.g. 0o600.
    func permissions(of path: String) -> mode_t? {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mode & 0o7777 : nil
    }
}
