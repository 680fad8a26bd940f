import Foundation
import PinproxyCore
import PinproxyRuntime

/// `pinproxy ca init|show|export|install [--config FILE]`: the local
/// interception CA in `interception.ca_dir` (SPEC §3.1). Exit codes per SPEC
/// §1: 0 done, 1 the configuration or the CA is not usable as it is, 2 usage,
/// 3 the machine (a file that cannot be written, a command that fails).
enum CACommand {
    enum Action: String, CaseIterable {
        case `init`, show, export, install
    }

    /// Where `install` puts the root: Debian's directory for local CAs
    /// (`update-ca-certificates` reads `*.crt` there). Tests point it elsewhere.
    static let storeDirectoryVariable = "PINPROXY_CA_STORE_DIR"
    static let defaultStoreDirectory = "/usr/local/share/ca-certificates"
    /// The command `install` runs after copying (`update-ca-certificates --fresh`).
    static let updateCommandVariable = "PINPROXY_UPDATE_CA_CERTIFICATES"
    static let defaultUpdateCommand = "update-ca-certificates"
    static let installedName = "pinproxy.crt"
    /// The bundle Debian's update-ca-certificates writes.
    static let systemBundle = "/etc/ssl/certs/ca-certificates.crt"

    static func execute(_ invocation: Invocation) -> Int32 {
        guard let action = invocation.caAction else { return 2 }
        let path = invocation.configPath ?? Invocation.defaultConfigPath
        guard let configuration = ConfigurationSource.load(invocation) else { return 1 }
        guard let section = configuration.interception else {
            Console.error("\(path): no \"interception\" section, so no CA: add \"interception\": { \"ca_dir\": \"/var/lib/pinproxy/ca\" } "
                + "to the configuration (SPEC: CONNECT to pinned hosts is refused without it)")
            return 1
        }
        let now = Date()
        switch action {
        case .`init`: return initialise(section, configuration: configuration, path: path, now: now)
        case .show, .export, .install:
            let authority: InterceptionAuthority
            do {
                authority = try InterceptionAuthority.load(directory: section.caDirectory, at: now, configPath: path)
            } catch {
                Console.error("\(error)")
                return error.kind == .io ? 3 : 1
            }
            switch action {
            case .show:
                let uncovered = authority.scope.uncoveredRules(in: configuration.policies)
                Console.print(describe(authority, configuration: configuration, uncovered: uncovered, now: now)
                    .map { String($0.dropFirst(2)) }.joined(separator: "\n"))
                if let expiry = expiryWarning(authority, configPath: path, now: now) { Console.error("warning: \(expiry)") }
                return 0
            case .export:
                // The PEM ends in a newline already.
                Console.print(String(authority.rootPEM.dropLast()))
                return 0
            default:
                return install(authority)
            }
        }
    }

    // MARK: init

    private static func initialise(_ section: Interception, configuration: Configuration, path: String, now: Date) -> Int32 {
        let needed = InterceptionScope(policies: configuration.policies)
        guard !needed.names.isEmpty else {
            Console.error("\(path): no hosts rule is intercepted (each is \"disable\" or an IP literal): there are no names to issue a CA for")
            return 1
        }
        var replacing: String?
        do {
            let existing = try InterceptionAuthority.load(directory: section.caDirectory, at: now, configPath: path)
            let missing = needed.names.filter { !existing.scope.covers(InterceptionScope(names: [$0])) }
            if missing.isEmpty && existing.notAfter.timeIntervalSince(now) >= renewalWindow {
                Console.print("the interception CA in \(existing.directory) already covers every intercepted host of \(path): nothing changed")
                Console.print(describe(existing, configuration: configuration, uncovered: [], now: now)
                    .dropFirst().map { String($0.dropFirst(2)) }.joined(separator: "\n"))
                return 0
            }
            replacing = missing.isEmpty
                ? "it expires \(RFC3339Timestamp.seconds(existing.notAfter)), within \(Int(renewalWindow / 86_400)) days"
                : "it does not cover \(missing.joined(separator: ", "))"
        } catch {
            switch error.kind {
            case .missing: break
            case .unusable: replacing = "it is unusable: \(error.problem) (\(error.path))"
            case .permissions, .io:
                // Never replace a CA whose files pinproxy may not read: the operator decides.
                Console.error("\(error)")
                return error.kind == .io ? 3 : 1
            }
        }
        let created: InterceptionAuthority
        do {
            created = try InterceptionAuthority.create(in: section.caDirectory, for: needed, at: now, configPath: path)
        } catch {
            Console.error("\(error)")
            return error.kind == .io ? 3 : 1
        }
        if let replacing {
            Console.print("issued a new interception CA generation in \(created.directory), replacing the previous one: \(replacing)")
        } else {
            Console.print("created the interception CA in \(created.directory)")
        }
        Console.print(describe(created, configuration: configuration, uncovered: [], now: now)
            .dropFirst().map { String($0.dropFirst(2)) }.joined(separator: "\n"))
        Console.print("clients must trust its root: run `pinproxy ca install` (or `pinproxy ca export` for another machine's store)")
        if replacing != nil {
            Console.print("the previous root no longer issues anything: replace it in every client store, "
                + "and reload the daemon (`systemctl reload pinproxy`) so it serves the new generation")
        }
        return 0
    }

    /// `init` re-issues a CA that expires within this window (`check` warns in it).
    static let renewalWindow: TimeInterval = 30 * 86_400

    // MARK: install

    private static func install(_ authority: InterceptionAuthority) -> Int32 {
        let environment = ProcessInfo.processInfo.environment
        let directory = environment[storeDirectoryVariable] ?? defaultStoreDirectory
        let target = (directory.hasSuffix("/") ? directory : directory + "/") + installedName
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data(authority.rootPEM.utf8).write(to: URL(fileURLWithPath: target), options: .atomic)
            // A trust anchor every user may read; only root (the directory's owner) may change it.
            chmod(target, 0o644)
        } catch {
            Console.error("\(target): cannot be written (\(error.localizedDescription)); run `pinproxy ca install` as root, e.g. with sudo")
            return 3
        }
        let command = environment[updateCommandVariable] ?? defaultUpdateCommand
        guard let executable = findExecutable(command) else {
            Console.error("\(command) not found: install Debian's ca-certificates package, or add \(target) to the system store by hand")
            return 3
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        // --fresh: rebuild every link, so a previous generation's root leaves the bundle.
        process.arguments = ["--fresh"]
        do {
            try process.run()
            process.waitUntilExit()
        } catch {
            Console.error("\(executable): cannot run (\(error.localizedDescription))")
            return 3
        }
        guard process.terminationStatus == 0 else {
            Console.error("\(executable) --fresh exited with status \(process.terminationStatus): the root is in \(target) but the system bundle may not have it")
            return 3
        }
        Console.print(installHints(target: target, fingerprint: authority.fingerprint))
        return 0
    }

    private static func findExecutable(_ command: String) -> String? {
        if command.contains("/") { return FileManager.default.isExecutableFile(atPath: command) ? command : nil }
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/sbin:/sbin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(command)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func installHints(target: String, fingerprint: String) -> String {
        """
        installed the interception root (sha256 \(fingerprint)) as \(target) and ran update-ca-certificates:
        OpenSSL and GnuTLS programs (curl, git, wget, apt) and Go programs (which read the system store) now trust it.
        Runtimes with a store of their own:
          Python requests, pip:  export REQUESTS_CA_BUNDLE=\(systemBundle)   (otherwise certifi's bundle)
          Python ssl, urllib:    export SSL_CERT_FILE=\(systemBundle)   (for a Python built with its own OpenSSL paths)
          Node.js, npm:          export NODE_EXTRA_CA_CERTS=\(target)
          Java:                  keytool -importcert -cacerts -storepass changeit -noprompt -alias pinproxy -file \(target)
                                 (after a new CA generation: keytool -delete -cacerts -storepass changeit -alias pinproxy first)
        Java does not apply name constraints on a trusted root, only on intermediates (PKIX trust anchors);
        pinproxy's issuing certificate carries the same constraints as its root, so Java too refuses any leaf
        of this CA for a name outside the configured hosts.
        """
    }

    // MARK: descriptions shared with check

    /// The `interception:` block of `check` (indented by two) and of `show`.
    static func describe(_ authority: InterceptionAuthority, configuration: Configuration, uncovered: [HostRule],
                         now: Date) -> [String] {
        var lines = ["  interception: CA \(authority.directory)",
                     "    names: \(authority.scope.names.joined(separator: ", "))",
                     "    expires: \(RFC3339Timestamp.seconds(authority.notAfter)) (in \(Int(authority.notAfter.timeIntervalSince(now) / 86_400)) days)",
                     "    generation: sha256 \(authority.fingerprint)",
                     "    connect_ports: \(configuration.connectPorts.sorted().map(String.init).joined(separator: ", "))"]
        if uncovered.isEmpty {
            lines.append("    hosts not covered: none")
        } else {
            lines.append("    hosts not covered: \(uncovered.map(\.key).joined(separator: ", ")) (CONNECT gets 403 until `pinproxy ca init` re-issues the CA)")
        }
        let ipRules = configuration.policies.rules.filter { $0.policy.kind != .disable && InterceptionScope.name(interceptedBy: $0) == nil }
        if !ipRules.isEmpty {
            lines.append("    never intercepted: \(ipRules.map(\.key).joined(separator: ", ")) (IP literals: the CA excludes every IP address)")
        }
        return lines
    }

    static func expiryWarning(_ authority: InterceptionAuthority, configPath: String, now: Date) -> String? {
        guard authority.notAfter.timeIntervalSince(now) < renewalWindow else { return nil }
        return "the interception CA in \(authority.directory) expires \(RFC3339Timestamp.seconds(authority.notAfter)): "
            + "run `\(InterceptionCAError.initCommand(configPath: configPath))` to issue a new one, and have clients trust its root"
    }
}
