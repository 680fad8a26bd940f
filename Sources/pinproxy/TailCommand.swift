import Foundation
import PinproxyCore

/// `pinproxy tail [-f] [-n N] [--json] [--host H] [--reason R] [--since T] [FILE|-]`:
/// the violation log as one readable line per event (SPEC §4): a live log
/// (followed with `-f` like `tail -F`, waiting for it to exist), a rotated
/// `.gz` one, or standard input.
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
        let printer = Printer(path: path == "-" ? TailInput.standardInputName : path, filter: filter,
                              printsJSON: invocation.printsJSON,
                              formatter: TailFormatter(usesColour: usesColour(environment: ProcessInfo.processInfo.environment)))
        if path == "-" { return readStandardInput(printer, invocation) }
        if TailInput.isGzipFile(path) == true {
            // A rotated, compressed log never grows: there is nothing to follow.
            guard !invocation.follow else {
                return usage("tail -f follows the live log; \(path) is a compressed rotated log (read it without -f)")
            }
            do {
                for record in printer.records(in: try TailInput.gzipLines(path)).suffix(invocation.lineCount) { printer.show(record) }
                return 0
            } catch {
                Console.error("tail: \(error)")
                return 3
            }
        }
        var follower = LogFollower(path: path)
        var appeared = false
        if follower == nil && errno == ENOENT && invocation.follow {
            // Like tail -F: the daemon creates the log on its first start, or after a rotation.
            Console.error("tail: \(path) does not exist yet; waiting for it")
            while follower == nil {
                guard errno == ENOENT else { break }
                Thread.sleep(forTimeInterval: 0.2)
                follower = LogFollower(path: path)
            }
            appeared = follower != nil
        }
        guard let follower else {
            Console.error("tail: cannot open \(path): \(String(cString: strerror(errno)))")
            return 3
        }
        // -n N: the last N matching events already in the file, like tail(1);
        // a file that appeared while waiting is new, so all of it is.
        let existing = printer.records(in: follower.initialLines())
        for record in appeared ? existing : Array(existing.suffix(invocation.lineCount)) { printer.show(record) }
        guard invocation.follow else { return 0 }
        while true {
            Thread.sleep(forTimeInterval: 0.2)
            for record in printer.records(in: follower.poll()) { printer.show(record) }
        }
    }

    /// https://no-color.org: a `NO_COLOR` that is present and not empty turns colour off.
    static func usesColour(environment: [String: String]) -> Bool {
        Console.isTerminal && (environment["NO_COLOR"] ?? "").isEmpty
    }

    /// `-`: standard input to its end, gzip or not; with `-f` each event is
    /// printed as it arrives (a pipe from `ssh host tail -F …`), else the last N.
    private static func readStandardInput(_ printer: Printer, _ invocation: Invocation) -> Int32 {
        var kept: [ViolationLogRecord] = []
        do {
            try TailInput.stream(STDIN_FILENO, name: TailInput.standardInputName) { lines in
                let records = printer.records(in: lines)
                if invocation.follow {
                    records.forEach(printer.show)
                } else {
                    kept = Array((kept + records).suffix(invocation.lineCount))
                }
            }
        } catch {
            kept.forEach(printer.show)
            Console.error("tail: \(error)")
            return 3
        }
        kept.forEach(printer.show)
        return 0
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
