import Foundation
import PinproxyCore
import PinproxyRuntime

/// `pinproxy probe HOST[:PORT] [--config FILE] [--chain FILE [--at TIME]]`:
/// evaluate the configured policy against a live host exactly as the daemon
/// would, or offline against a chain file exactly as a handshake would; print
/// the verdict and its evidence; exit 0 accepted, 1 rejected, 3 no verdict (SPEC §1).
enum ProbeCommand {
    static func execute(_ invocation: Invocation) -> Int32 {
        let target: HostArgument
        do {
            target = try HostArgument(invocation.positional[0])
        } catch {
            Console.error("pinproxy: \(error)")
            return 2
        }
        guard let configuration = ConfigurationSource.load(invocation) else { return 1 }
        let report: ProbeReport
        if let chainFile = invocation.chainFile {
            report = PolicyProbe.run(configuration: configuration, host: target.host.value, port: target.port,
                                     chainFile: chainFile, at: invocation.evaluationTime)
        } else {
            report = PolicyProbe.run(configuration: configuration, host: target.host.value, port: target.port,
                                     environment: ProcessInfo.processInfo.environment)
        }
        var lines = ["probe \(target.endpoint)"]
        if let chainFile = invocation.chainFile, let time = report.offlineTime {
            lines.append("  chain:    \(chainFile) (offline, no connection; evaluated at \(RFC3339Timestamp.seconds(time)))")
        }
        lines.append("  rule:     \(report.rule ?? "-")")
        if let policy = report.policy {
            if policy.kind == .disable {
                lines.append("  policy:   disable (no evaluation at all)")
            } else {
                var traits = [policy.enforce ? "enforce" : "report-only",
                              "validate_chain \(policy.validateChain)", "validate_host \(policy.validateHost)"]
                if let expires = policy.expires { traits.append("pins expire \(expires)") }
                lines.append("  policy:   \(policy.kind.rawValue) (\(traits.joined(separator: ", ")))")
            }
        }
        if !report.knownPins.isEmpty { lines.append("  pins:     \(report.knownPins.joined(separator: ", "))") }
        if let peer = report.peerAddress { lines.append("  peer:     \(peer)") }
        if let command = report.policy?.customCheck?.command, let answer = report.customVerdict {
            lines.append("  command:  \(command.joined(separator: " "))")
            switch answer {
            case let .accepted(output): lines.append("  answer:   exit 0 (accepts)" + (output.isEmpty ? "" : "; first line: \(output)"))
            case let .rejected(output): lines.append("  answer:   exit 1 (rejects)" + (output.isEmpty ? "" : "; first line: \(output)"))
            case let .failed(detail): lines.append("  answer:   none: \(detail)")
            }
        }
        lines.append("  verdict:  \(report.verdict.label)")
        if let reason = report.reason { lines.append("  reason:   \(reason.rawValue)") }
        if !report.detail.isEmpty { lines.append("  detail:   \(report.detail)") }
        if let skipped = report.notEvaluated { lines.append("  not evaluated: \(skipped)") }
        if report.policy?.kind == .disable && report.verdict == .accepted {
            lines.append("  served chain: not evaluated (policy disable)")
        } else if !report.servedChain.isEmpty {
            lines.append("  served chain:")
            for (index, certificate) in report.servedChain.enumerated() {
                lines.append("    \(index + 1). \(certificate.subject)  (issuer \(certificate.issuer), not after \(RFC3339Timestamp.seconds(certificate.notAfter)))")
                lines.append("       \(PinsCommand.pin(certificate))")
            }
            if report.evaluated && report.verifiedChain == nil {
                lines.append("  verified chain: none (path validation failed)")
            }
        }
        Console.print(lines.joined(separator: "\n"))
        return report.verdict.exitCode
    }
}
