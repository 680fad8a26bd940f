import Foundation

/// What /proc says of a thread: its kernel name and nice value.
enum ThreadStat {
    /// The nice value in a /proc `stat` file: field 19, the 17th after the
    /// command name's closing parenthesis (the name itself may hold spaces).
    static func nice(statPath: String) -> Int? {
        guard let stat = try? String(contentsOfFile: statPath, encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 16 ? Int(fields[16]) : nil
    }

    /// The calling thread's nice value.
    static func currentNice() -> Int? { nice(statPath: "/proc/thread-self/stat") }

    /// The calling thread's kernel name.
    static func currentName() -> String? {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
    }

    /// The nice value of each of `pid`'s threads whose kernel name is `name`.
    static func niceValues(ofThreadsNamed name: String, in pid: Int32) -> [Int] {
        let tasks = "/proc/\(pid)/task"
        return ((try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []).compactMap { tid in
            guard let comm = try? String(contentsOfFile: "\(tasks)/\(tid)/comm", encoding: .utf8),
                  comm.trimmingCharacters(in: .newlines) == name else { return nil }
            return nice(statPath: "\(tasks)/\(tid)/stat")
        }
    }
}
