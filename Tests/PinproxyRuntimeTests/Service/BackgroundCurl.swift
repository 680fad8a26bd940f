import Foundation

/// A curl download that runs while the test does something else (reload,
/// SIGTERM), saving the body to a file and reporting status and size at the end.
final class BackgroundCurl {
    /// What curl reported when it finished.
    struct Outcome: Equatable {
        var exitCode: Int32
        var status: Int
        var downloadedBytes: Int
    }

    let outputPath: String
    private let process = Process()
    private let reportPath: String

    /// `arguments` are curl's; the body goes to a file in `directory`.
    init(_ arguments: [String], directory: String, timeout: TimeInterval = 60) throws {
        let name = UUID().uuidString
        outputPath = directory + "/download-\(name)"
        reportPath = directory + "/download-\(name).report"
        _ = FileManager.default.createFile(atPath: reportPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", "-S", "--max-time", String(Int(timeout)), "-o", outputPath,
                             "-w", "%{http_code} %{size_download}"] + arguments
        process.standardOutput = FileHandle(forWritingAtPath: reportPath)
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Bytes of body received so far.
    var receivedBytes: Int {
        ((try? FileManager.default.attributesOfItem(atPath: outputPath))?[.size] as? Int) ?? 0
    }

    /// Waits until at least `bytes` have arrived; false after `timeout`.
    func waitForBytes(_ bytes: Int, timeout: TimeInterval = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while receivedBytes < bytes && process.isRunning && Date() < deadline { usleep(20_000) }
        return receivedBytes >= bytes
    }

    /// Waits for curl to exit (nil after `timeout`).
    func finish(timeout: TimeInterval = 60) -> Outcome? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        guard !process.isRunning else { return nil }
        let report = ((try? String(contentsOfFile: reportPath, encoding: .utf8)) ?? "").split(separator: " ")
        return Outcome(exitCode: process.terminationStatus,
                       status: report.first.flatMap { Int($0) } ?? 0,
                       downloadedBytes: report.dropFirst().first.flatMap { Int($0) } ?? -1)
    }
}
