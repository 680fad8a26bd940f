import Foundation
import Testing

/// `make install` / `make uninstall` into a staging root (DESTDIR), as a
/// packager runs them. `BINARY=.build/debug/pinproxy` installs the binary the
/// tests already built instead of making a release build in the test run.
@Suite("make install and uninstall", .serialized)
struct MakeInstallTests {
    static let stagedFiles: [String: Int] = [
        "/usr/local/bin/pinproxy": 0o755,
        "/usr/local/lib/systemd/system/pinproxy.service": 0o644,
        "/usr/local/lib/systemd/system/pinproxy.socket": 0o644,
        "/usr/local/share/doc/pinproxy/README.md": 0o644,
        "/usr/local/share/doc/pinproxy/configuration.md": 0o644,
        "/usr/local/share/doc/pinproxy/http.md": 0o644,
        "/usr/local/share/doc/pinproxy/logs.md": 0o644,
        "/usr/local/share/doc/pinproxy/metrics.md": 0o644,
        "/usr/local/share/man/man8/pinproxy.8": 0o644,
        "/usr/local/share/man/man8/pinproxy-ca.8": 0o644,
        "/usr/local/share/man/man5/pinproxy.json.5": 0o644,
        "/etc/pinproxy/pinproxy.json": 0o644,
        "/etc/logrotate.d/pinproxy": 0o644,
    ]

    @Test("install puts exactly the expected files with their modes; uninstall removes all but the config")
    func installAndUninstall() throws {
        let root = try TemporaryDirectory()
        let install = try make(["install", "DESTDIR=\(root.path)"])
        #expect(install.status == 0, "\(install.output)\(install.errorOutput)")
        #expect(try Self.regularFiles(under: root.path) == Self.stagedFiles)

        let installed = root.path + "/usr/local/bin/pinproxy"
        #expect(FileManager.default.contentsEqual(atPath: installed, andPath: PinproxyBinary.path))
        let version = try ChildProcess.run(installed, ["--version"])
        #expect(version.status == 0)
        #expect(version.output.hasPrefix("pinproxy "))
        let unit = contents(of: root.path + "/usr/local/lib/systemd/system/pinproxy.service")
        #expect(unit.contains("\nExecStart=/usr/local/bin/pinproxy run --config /etc/pinproxy/pinproxy.json\n"))
        #expect(contents(of: root.path + "/etc/pinproxy/pinproxy.json") == contents(of: ToolPaths.repositoryRoot + "/etc/pinproxy/pinproxy.json"))

        let uninstall = try make(["uninstall", "DESTDIR=\(root.path)"])
        #expect(uninstall.status == 0, "\(uninstall.output)\(uninstall.errorOutput)")
        #expect(try Self.regularFiles(under: root.path) == ["/etc/pinproxy/pinproxy.json": 0o644])
    }

    /// The installed man pages and the NAME line each must render.
    static let manPages = [
        ("/usr/local/share/man/man8/pinproxy.8", "pinproxy - certificate-pinning HTTP proxy"),
        ("/usr/local/share/man/man5/pinproxy.json.5", "pinproxy.json - pinproxy configuration file"),
        ("/usr/local/share/man/man8/pinproxy-ca.8", "pinproxy ca - create, show, export and install"),
    ]

    @Test("the installed man pages render with man -l, without a roff warning, and name only pages that exist")
    func manPagesRender() throws {
        let root = try TemporaryDirectory()
        let install = try make(["install", "DESTDIR=\(root.path)"])
        #expect(install.status == 0, "\(install.output)\(install.errorOutput)")
        for (page, name) in Self.manPages {
            let result = try ChildProcess.run("/usr/bin/man", ["--warnings", "-l", root.path + page],
                                              options: .init(environment: ["MANWIDTH": "80", "LC_ALL": "C"]))
            #expect(result.status == 0, "\(page): \(result.errorOutput)")
            #expect(result.errorOutput == "", "\(page) warns:\n\(result.errorOutput)")
            // Justified text may widen a space: compare with runs of spaces collapsed.
            let text = result.output.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            #expect(text.contains(name), "\(page):\n\(result.output.prefix(400))")
            // SEE ALSO and the text refer to pages by name(section): each of pinproxy's own must be installed.
            for reference in ["pinproxy(8)", "pinproxy.json(5)", "pinproxy-ca(8)"] where result.output.contains(reference) {
                let section = reference.dropLast().split(separator: "(").last.map(String.init) ?? ""
                let file = reference.split(separator: "(").first.map(String.init) ?? ""
                #expect(FileManager.default.fileExists(atPath: root.path + "/usr/local/share/man/man\(section)/\(file).\(section)"),
                        "\(page) names \(reference)")
            }
        }
    }

    @Test("install never overwrites an existing config")
    func keepsExistingConfig() throws {
        let root = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.path + "/etc/pinproxy", withIntermediateDirectories: true)
        let mine = "{ \"default_policy\": \"deny\" } // the operator's\n"
        try root.write(mine, to: "etc/pinproxy/pinproxy.json")
        let install = try make(["install", "DESTDIR=\(root.path)"])
        #expect(install.status == 0, "\(install.output)\(install.errorOutput)")
        #expect(install.output.contains("keeping the existing \(root.path)/etc/pinproxy/pinproxy.json"))
        #expect(contents(of: root.path + "/etc/pinproxy/pinproxy.json") == mine)
    }

    @Test("PREFIX=/usr moves the binary and units and rewrites ExecStart= to match")
    func prefix() throws {
        let root = try TemporaryDirectory()
        let install = try make(["install", "DESTDIR=\(root.path)", "PREFIX=/usr"])
        #expect(install.status == 0, "\(install.output)\(install.errorOutput)")
        let expected = Dictionary(uniqueKeysWithValues: Self.stagedFiles.map {
            ($0.key.replacingOccurrences(of: "/usr/local/", with: "/usr/"), $0.value)
        })
        #expect(try Self.regularFiles(under: root.path) == expected)
        let unit = contents(of: root.path + "/usr/lib/systemd/system/pinproxy.service")
        #expect(unit.contains("\nExecStartPre=/usr/bin/pinproxy check --config /etc/pinproxy/pinproxy.json\n"))
        #expect(unit.contains("\nExecStart=/usr/bin/pinproxy run --config /etc/pinproxy/pinproxy.json\n"))
        // Comments may mention the default; no setting may point into /usr/local.
        let settings = unit.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(settings.filter { $0.contains("/usr/local/") } == [])
    }

    private func make(_ arguments: [String]) throws -> ChildProcess.Result {
        try ChildProcess.run("/usr/bin/make", ["--no-print-directory"] + arguments + ["BINARY=.build/debug/pinproxy"],
                             options: .inRepository, timeout: 120)
    }

    /// Every regular file below `root` as its path inside the root → permission bits.
    static func regularFiles(under root: String) throws -> [String: Int] {
        var files: [String: Int] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            let attributes = try FileManager.default.attributesOfItem(atPath: root + "/" + relative)
            guard attributes[.type] as? FileAttributeType == .typeRegular else { continue }
            files["/" + relative] = (attributes[.posixPermissions] as? Int) ?? -1
        }
        return files
    }
}
