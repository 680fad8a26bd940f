import Foundation

/// Runs the built `pinproxy` executable as an operator would, capturing its
/// exit status, standard output and standard error (both pipes, so no colour).
enum PinproxyBinary {
    /// `<repository>/.build/debug/pinproxy`, found from this file's location.
    static let path: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }  // CLI → PinproxyRuntimeTests → Tests → root
        return url.path + "/.build/debug/pinproxy"
    }()

    struct Result {
        var status: Int32
        var output: String
        var errorOutput: String
        var outputLines: [String] { output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty } }
    }

    /// Runs `pinproxy arguments…` to completion (killed after `timeout`).
    static func run(_ arguments: [String], environment: [String: String] = [:],
                    timeout: TimeInterval = 30) throws -> Result {
        let directory = try TemporaryDirectory()
        let process = try start(arguments, environment: environment, directory: directory.path)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      output: (try? String(contentsOfFile: directory.path + "/stdout", encoding: .utf8)) ?? "",
                      errorOutput: (try? String(contentsOfFile: directory.path + "/stderr", encoding: .utf8)) ?? "")
    }

    /// Starts `pinproxy arguments…` with its output going to `directory`/stdout and /stderr.
    static func start(_ arguments: [String], environment: [String: String] = [:], directory: String) throws -> Process {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestFailure("\(path) is missing: run `swift build` first")
        }
        _ = FileManager.default.createFile(atPath: directory + "/stdout", contents: nil)
        _ = FileManager.default.createFile(atPath: directory + "/stderr", contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/stdout"))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/stderr"))
        try process.run()
        return process
    }
}
