import Foundation

/// A git server over HTTPS (Tests/Tools/git_origin.py: smart HTTP through
/// `git http-backend`), serving a bare repository made at test time for one
/// `Payload`: a single file `payload` of random bytes (so nothing compresses
/// it below its size on the wire).
final class GitOrigin {
    /// One request the server answered.
    struct Request: Decodable {
        var method: String
        var path: String
        var status: Int
        var body_bytes: Int
    }

    /// The file each repository holds.
    static let payloadFile = "payload"
    /// The git the origin and the client both run.
    static let executable = ClientRuntime.find("git")

    private let peer: PythonPeer
    private let log: JSONLinesLog<Request>
    private let payload: Payload
    private let digest: BodyDigest
    var port: UInt16 { peer.port }

    /// The repository (`<name>.git`) that holds `payload`.
    static func repository(for payload: Payload) -> String { payload == .small ? "small" : "large" }

    /// The environment every git the tests run gets: no system or user
    /// configuration (HOME is `home`), never a prompt for credentials.
    static func environment(home: String) -> [String: String] {
        ["HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_AUTHOR_NAME": "pinproxy tests",
         "GIT_AUTHOR_EMAIL": "tests@pinproxy.invalid", "GIT_COMMITTER_NAME": "pinproxy tests",
         "GIT_COMMITTER_EMAIL": "tests@pinproxy.invalid"]
    }

    /// Runs `git arguments…` to completion; throws with its stderr when it fails.
    @discardableResult
    static func git(_ arguments: [String], home: String, extraEnvironment: [String: String] = [:],
                    timeout: TimeInterval = 120) throws -> ChildProcess.Result {
        guard let executable else { throw TestFailure("git is not installed") }
        let options = ChildProcess.Options(environment: environment(home: home).merging(extraEnvironment) { $1 })
        let result = try ChildProcess.run(executable, arguments, options: options, timeout: timeout)
        guard result.status == 0 else {
            throw TestFailure("git \(arguments.joined(separator: " ")) exited \(result.status): \(result.errorOutput)")
        }
        return result
    }

    init(certificateChain: String, key: String, serving payload: Payload, directory: TemporaryDirectory) throws {
        let prefix = PythonPeer.filePrefix("git-origin", in: directory.path)
        let root = prefix + "-repositories", work = prefix + "-work", home = prefix + "-home"
        for folder in [root, work, home] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        self.payload = payload
        let name = Self.repository(for: payload), tree = work + "/" + name
        try Self.git(["init", "-q", tree], home: home)
        let file = tree + "/" + Self.payloadFile
        try ChildProcess.shell("head -c \(payload.size) /dev/urandom > '\(file)'").requireSuccess()
        guard let digest = BodyDigest(file: file) else { throw TestFailure("cannot read \(file)") }
        self.digest = digest
        // Level 0: the 64 MiB are stored, not deflated, every time a pack is made (faster; random bytes do not shrink).
        try Self.git(["-C", tree, "-c", "core.compression=0", "add", Self.payloadFile], home: home)
        try Self.git(["-C", tree, "commit", "-q", "-m", "payload"], home: home)
        try Self.git(["clone", "-q", "--bare", tree, root + "/\(name).git"], home: home)
        try Self.git(["-C", root + "/\(name).git", "config", "core.compression", "0"], home: home)
        log = JSONLinesLog(path: prefix + ".events")
        peer = try PythonPeer(script: "git_origin.py",
                              arguments: ["--cert", certificateChain, "--key", key, "--root", root, "--events", log.path],
                              filePrefix: prefix)
    }

    /// The digest of `payload`'s file, as committed.
    func payloadDigest(_ payload: Payload) throws -> BodyDigest {
        guard payload == self.payload else { throw TestFailure("this origin serves the \(self.payload) repository only") }
        return digest
    }

    /// Every request answered so far, in order.
    func requests() -> [Request] { log.records() }
}

extension ChildProcess.Result {
    /// Throws with stderr unless the exit status is 0.
    func requireSuccess() throws {
        guard status == 0 else { throw TestFailure("exited \(status): \(errorOutput)") }
    }
}
