import Foundation
import PinproxyCore

/// `pinproxy tail [-f] [-n N] [--json] [--host H] [--reason R] [--since T] [FILE]`:
/// the violation log as one readable line per event (SPEC §4).
enum TailCommand {
    static func execute(_ invocation: Invocation) -> Int32 {
        var filter = TailFilter()
        if let text = invocation.hostFilter {
            guard let pattern = HostPattern(text) else {
                return usage("--host \(text): expected a host name, IP literal, *.suffix or **.suffix, as in hosts keys")
            }
            filter.host = pattern
        }
        if let text = invocation.reasonFilter {
            guard let reason = ViolationReason(rawValue: text) else {
                let known = ViolationReason.allCases.map(\.rawValue).joined(separator: ", ")
                return usage("--reason \(text): expected one of \(known)")
            }
            filter.reason = reason
        }
        if let text = invocation.since {
            guard let since = TailFilter.since(text, now: Date()) else {
                return usage("--since \(text): expected a duration (90s, 10m, 2h) or an RFC 3339 time (2026-11-30T17:00:00Z)")
            }
            filter.since = since
        }
        guard let path = logPath(invocation) else { return 1 }
        guard let follower = LogFollower(path: path) else {
            Console.error("tail: cannot open \(path): \(String(cString: strerror(errno)))")
            return 3
        }
        let printer = Printer(path: path, filter: filter, printsJSON: invocation.printsJSON,
                              formatter: TailFormatter(usesColour: Console.isTerminal))
        // -n N: the last N matching events already in the file, like tail(1).
        let existing = printer.records(in: follower.initialLines())
        for record in existing.suffix(invocation.lineCount) { printer.show(record) }
        guard invocation.follow else { return 0 }
        while true {
            Thread.sleep(forTimeInterval: 0.2)
            for record in printer.records(in: follower.poll()) { printer.show(record) }
        }
    }

    private static func usage(_ message: String) -> Int32 {
        Console.error("pinproxy: \(message)")
        return 2
    }

    /// FILE, else the configuration's `violation_log`, else the built-in default.
    private static func logPath(_ invocation: Invocation) -> String? {
        if let file = invocation.positional.first { return file }
        return ConfigurationSource.load(invocation)?.violationLogPath
    }

    /// Parses, filters and prints records of one log.
    private struct Printer {
        var path: String
        var filter: TailFilter
        var printsJSON: Bool
        var formatter: TailFormatter

        /// The matching records of `lines`; malformed lines are named on stderr and skipped.
        func records(in lines: [ViolationLogReader.Line]) -> [ViolationLogRecord] {
            lines.compactMap { line in
                guard !line.text.isEmpty else { return nil }
                do {
                    let record = try ViolationLogRecord.parse(line.text)
                    return filter.includes(record) ? record : nil
                } catch {
                    Console.error("tail: \(path):\(line.number): malformed line skipped (\(error))")
                    return nil
                }
            }
        }

        func show(_ record: ViolationLogRecord) {
            Console.print(printsJSON ? record.rawLine : formatter.line(for: record))
        }
    }
}
