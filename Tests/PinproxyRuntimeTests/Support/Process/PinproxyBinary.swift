import Foundation

/// The built `pinproxy` executable, run as an operator or a service manager
/// runs it: everything goes through `ChildProcess`.
enum PinproxyBinary {
    /// `<repository>/.build/debug/pinproxy`: the Makefile builds the debug
    /// binary before any test pass, the sanitizer passes included.
    static var path: String { ToolPaths.repositoryRoot + "/.build/debug/pinproxy" }

    /// The signals the daemon handles (ARCHITECTURE "Daemon"): what a careless
    /// parent leaving them blocked would take from it.
    static let handledSignals: [Int32] = [SIGHUP, SIGTERM, SIGINT, SIGUSR1]

    /// Runs `pinproxy arguments…` to completion (a subcommand: check, probe,
    /// pins, tail) with the test runner's signal mask, as a shell would.
    static func run(_ arguments: [String], environment: [String: String] = [:],
                    timeout: TimeInterval = 30) throws -> ChildProcess.Result {
        try ChildProcess.run(path, arguments, options: .init(environment: environment), timeout: timeout)
    }

    /// Starts `pinproxy arguments…` and leaves it running.
    static func start(_ arguments: [String], options: ChildProcess.Options = .init()) throws -> ChildProcess {
        try ChildProcess(path, arguments, options: options)
    }

    /// Starts `pinproxy run --config path` as a service manager would (an
    /// empty signal mask unless `options` say otherwise) and waits for its
    /// "listening on" line.
    static func startDaemon(configuration path: String, options: ChildProcess.Options = .init(signalMask: .clean)) throws -> ChildProcess {
        let daemon = try start(["run", "--config", path], options: options)
        try daemon.waitForStderr(containing: "listening on", timeout: 15)
        return daemon
    }
}
