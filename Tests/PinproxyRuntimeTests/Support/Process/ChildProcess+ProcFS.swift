import Foundation

/// What `/proc/PID` says about the child: the resource faults measure the
/// daemon's descriptors, memory and CPU time from outside, as an operator would.
extension ChildProcess {
    /// Open descriptors (`/proc/PID/fd`).
    func descriptorCount() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).count
    }

    /// Resident set size in bytes (`VmRSS` of `/proc/PID/status`), -1 when unreadable.
    func residentBytes() -> Int {
        guard let line = contents(of: "/proc/\(pid)/status").split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kibibytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return -1 }
        return kibibytes * 1024
    }

    /// User + system CPU seconds used so far (`/proc/PID/stat` fields 14 and 15), -1 when unreadable.
    func cpuSeconds() -> Double {
        let text = contents(of: "/proc/\(pid)/stat")
        guard let close = text.lastIndex(of: ")") else { return -1 }
        // Fields after "comm)" start at field 3 (state); utime and stime are fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return -1 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
