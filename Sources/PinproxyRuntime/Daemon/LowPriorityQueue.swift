internal import CLibevent
import Foundation

/// The thread for work that must not take CPU time from a serving loop:
/// building a reloaded configuration (100,000 rules: about 2 s of CPU),
/// dropping the counters of removed rules, freeing a retired generation;
/// and, after such jobs, giving the memory they freed back to the kernel.
///
/// It runs at nice 19. On a CPU that a loop keeps busy, the kernel gives it
/// a small share (weight 15 against the loop's 1,024) and lets a loop that
/// wakes run ahead of it, though not always at once. At the default
/// priority, reloads of 100,000 rules on the loop's CPU cut a keep-alive
/// load's requests/s by 38-43% and raised its p99 1.3-4x (`bench/reload.sh`);
/// at nice 19, in seven runs, requests/s were -12% to +20% of a run without
/// reloads and p99 0.9-1.9x, in later runs 1.8-3.2x (eight `make bench` runs:
/// 1.82-3.18x). That much is the CPU's: a shell loop at nice 19 or
/// `SCHED_IDLE` on the loop's CPU, without any reload, raised the p99
/// 1.9-5.2x (kernel 6.18), and `SCHED_IDLE` for this thread did not
/// measurably help; beside a `pinproxy check` of the same file the
/// reloading run's p99 was 1.1-1.6x (bench/README). The price: on
/// CPUs the loops saturate, a build waits for idle time, so a reload takes
/// longer (the old generation serves, with its policies, until then).
///
/// One thread of its own, not a Dispatch queue: an unprivileged thread cannot
/// lower its nice value again (`RLIMIT_NICE` is 0 by default), so a pool
/// thread would carry nice 19 to unrelated work. Jobs run one at a time, in
/// the order they fall due.
final class LowPriorityQueue: @unchecked Sendable {
    /// The process's one queue (started by the first job).
    static let shared = LowPriorityQueue(name: "pinproxy-low")
    static let niceValue: Int32 = 19

    private struct Job {
        let due: Date
        let work: @Sendable () -> Void
    }

    private let name: String
    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var isStarted = false

    init(name: String) { self.name = name }

    /// Runs `work` on the queue's thread once `delay` seconds have passed,
    /// after every job that fell due before it.
    func async(after delay: TimeInterval = 0, _ work: @escaping @Sendable () -> Void) {
        condition.lock()
        defer { condition.unlock() }
        jobs.append(Job(due: Date().addingTimeInterval(delay), work: work))
        if !isStarted {
            isStarted = true
            Thread.startNamed(name) { [self] in run() }
        }
        condition.signal()
    }

    private func run() {
        // Raising one's own nice value needs no privilege; if a sandbox
        // refused it anyway, the work is still done, at the default priority.
        _ = shim_set_thread_nice(Self.niceValue)
        while true {
            runNextDueJob()
            // What the jobs free is large (a retired generation, a build's parsed
            // file, the counters of removed rules: 100,000 rules are ~150 MB) and
            // glibc keeps freed memory in its arenas: without this, a daemon
            // started with 100,000 rules stood at 357-377 MB after a few reloads,
            // with it at 231-242 MB (211-227 MB since the first file's parse is no
            // longer held, ae1a4eb). Once per run of jobs, when none is left due.
            if !hasDueJob() { _ = shim_malloc_trim() }
        }
    }

    /// Runs the next job that falls due; the job's closure, and what only it
    /// kept alive, is released before this returns.
    private func runNextDueJob() {
        condition.lock()
        let job = nextDueJob()
        condition.unlock()
        job.work()
    }

    private func hasDueJob() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let now = Date()
        return jobs.contains { $0.due <= now }
    }

    /// Waits (the lock held) until a job is due and takes it: the earliest
    /// due, and of those due at once the first queued.
    private func nextDueJob() -> Job {
        while true {
            guard let index = jobs.indices.min(by: { jobs[$0].due < jobs[$1].due }) else {
                condition.wait()
                continue
            }
            if jobs[index].due <= Date() { return jobs.remove(at: index) }
            _ = condition.wait(until: jobs[index].due)
        }
    }
}
