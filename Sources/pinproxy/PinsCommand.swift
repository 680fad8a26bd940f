import Foundation
import PinproxyCore
import PinproxyRuntime

/// `pinproxy pins HOST[:PORT] | --cert FILE... | --learned`: print the SPKI pins of a
/// live chain or of certificate files, and a ready-to-paste `hosts` entry
/// (SPEC §1). It validates nothing, and says so: it is how pins are learnt.
enum PinsCommand {
    static let warning = "pinproxy did not validate this chain: check it before you trust these pins."

    static func execute(_ invocation: Invocation) -> Int32 {
        if invocation.printsLearnedPins { return LearnedPinsCommand.execute(invocation) }
        if !invocation.certificateFiles.isEmpty { return printFiles(invocation.certificateFiles) }
        let target: HostArgument
        do {
            target = try HostArgument(invocation.positional[0])
        } catch {
            Console.error("pinproxy: \(error)")
            return 2
        }
        guard let configuration = ConfigurationSource.load(invocation) else { return 1 }
        // SPEC §2 `resolve`: connect where the daemon would, send SNI for the name.
        let override = configuration.resolveOverrides[target.endpoint]
        let chain: [CertificateFacts]
        do {
            chain = try ServedChainFetcher.fetch(host: target.host.value, port: target.port, connectTo: override)
        } catch {
            Console.error("pins: cannot fetch the chain of \(target.endpoint): \(error)")
            return 3
        }
        Console.print("\(target.endpoint)\(override.map { " (resolve → \($0))" } ?? "") served \(chain.count) certificate\(chain.count == 1 ? "" : "s"):")
        for (index, certificate) in chain.enumerated() {
            printCertificate(certificate, title: "\(index + 1). \(index == 0 ? "leaf" : "chain certificate")")
        }
        printEntry(key: target.host.value, chain: chain)
        return 0
    }

    private static func printFiles(_ paths: [String]) -> Int32 {
        var all: [CertificateFacts] = []
        for path in paths {
            do {
                let certificates = try ServedChainFetcher.certificates(inFile: path)
                for (index, certificate) in certificates.enumerated() {
                    printCertificate(certificate, title: "\(path)\(certificates.count > 1 ? " #\(index + 1)" : "")")
                }
                all += certificates
            } catch {
                Console.error("pins: \(error)")
                return 1
            }
        }
        printEntry(key: "HOST", chain: all)
        return 0
    }

    private static func printCertificate(_ certificate: CertificateFacts, title: String) {
        Console.print("""
        \(title)
          subject:   \(certificate.subject)
          issuer:    \(certificate.issuer)
          not after: \(RFC3339Timestamp.seconds(certificate.notAfter))
          pin:       \(pin(certificate))
        """)
    }

    static func pin(_ certificate: CertificateFacts) -> String {
        "sha256/" + Data(certificate.spkiSHA256).base64EncodedString()
    }

    /// A `hosts` entry with two pins (RFC 7469 §4.3: a backup pin keeps a
    /// key rotation from locking clients out): the leaf's and its issuer's,
    /// or the leaf's and a note where the backup goes.
    private static func printEntry(key: String, chain: [CertificateFacts]) {
        guard let leaf = chain.first else { return }
        var pins = ["      \"\(pin(leaf))\", // \(leaf.subject)"]
        if chain.count > 1 {
            pins.append("      \"\(pin(chain[1]))\", // \(chain[1].subject) (issuer)")
        } else {
            pins.append("      // add a backup pin here: a second key you hold, or the issuer's")
        }
        Console.print("""

        hosts entry, ready to paste\(key == "HOST" ? " (replace HOST with the host name)" : ""):
          "\(key)": {
            "policy": "pin-public-keys",
            "pins": [
        \(pins.joined(separator: "\n"))
            ]
          }

        \(warning)
        """)
    }
}
