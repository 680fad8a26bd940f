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
    private let curl: ChildProcess

    /// `arguments` are curl's; the body goes to a file in `directory`.
    init(_ arguments: [String], directory: String, timeout: TimeInterval = 60) throws {
        outputPath = directory + "/download-\(UUID().uuidString)"
        // -w prints the report on stdout once the transfer ends.
        curl = try ChildProcess("/usr/bin/curl", ["-s", "-S", "--max-time", String(Int(timeout)), "-o", outputPath,
                                                  "-w", "%{http_code} %{size_download}"] + arguments)
    }

    /// Bytes of body received so far.
    var receivedBytes: Int {
        ((try? FileManager.default.attributesOfItem(atPath: outputPath))?[.size] as? Int) ?? 0
    }

    /// The body received so far.
    var body: Data { (try? Data(contentsOf: URL(fileURLWithPath: outputPath))) ?? Data() }

    /// Waits until at least `bytes` have arrived (false after `timeout`, or once curl has ended short of them).
    func waitForBytes(_ bytes: Int, timeout: TimeInterval = 20) -> Bool {
        _ = eventually(timeout: timeout) { receivedBytes >= bytes || !curl.isRunning }
        return receivedBytes >= bytes
    }

    /// Waits for curl to exit (nil after `timeout`).
    func finish(timeout: TimeInterval = 60) -> Outcome? {
        guard let exitCode = curl.waitForExit(timeout: timeout) else { return nil }
        let report = curl.stdoutText.split(separator: " ")
        return Outcome(exitCode: exitCode,
                       status: report.first.flatMap { Int($0) } ?? 0,
                       downloadedBytes: report.dropFirst().first.flatMap { Int($0) } ?? -1)
    }
}
