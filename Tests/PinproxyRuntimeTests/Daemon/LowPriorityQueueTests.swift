import Foundation
import Testing
@testable import PinproxyRuntime

/// The queue that builds reloads and frees retired generations: its jobs run
/// on a thread of their own at nice 19, in the order they fall due.
@Suite("LowPriorityQueue")
struct LowPriorityQueueTests {
    private final class Record: @unchecked Sendable {
        let lock = NSLock()
        var events: [String] = []
        var nice: Int?
        var thread: String?
        func add(_ event: String) { lock.withLock { events.append(event) } }
        var snapshot: [String] { lock.withLock { events } }
    }

    @Test("a job runs on the queue's own thread at nice 19, not at the caller's priority")
    func jobsRunAtNice19() throws {
        let queue = LowPriorityQueue(name: "test-low-nice")
        let record = Record()
        let callerNice = ThreadStat.currentNice()
        queue.async {
            record.lock.withLock {
                record.nice = ThreadStat.currentNice()
                record.thread = ThreadStat.currentName()
            }
            record.add("ran")
        }
        #expect(eventually { record.snapshot == ["ran"] })
        #expect(record.lock.withLock { record.nice } == Int(LowPriorityQueue.niceValue))
        #expect(record.lock.withLock { record.thread } == "test-low-nice")
        #expect(ThreadStat.currentNice() == callerNice, "the caller's own priority changed")
    }

    @Test("jobs run in the order they fall due: a delayed job lets later ones pass and runs after its delay")
    func dueOrder() throws {
        let queue = LowPriorityQueue(name: "test-low-order")
        let record = Record()
        let queued = Date()
        let ranDelayed = Locked<Date?>(nil)
        queue.async(after: 0.4) {
            ranDelayed.withLock { $0 = Date() }
            record.add("delayed")
        }
        for index in 0..<5 { queue.async { record.add("now \(index)") } }
        #expect(eventually { record.snapshot.count == 6 })
        #expect(record.snapshot == ["now 0", "now 1", "now 2", "now 3", "now 4", "delayed"])
        let delay = try #require(ranDelayed.withLock { $0 }).timeIntervalSince(queued)
        #expect(delay >= 0.4, "the delayed job ran after \(delay) s")
    }

    @Test("a job queued while another runs waits for it: one at a time")
    func oneAtATime() throws {
        let queue = LowPriorityQueue(name: "test-low-serial")
        let record = Record()
        let release = DispatchSemaphore(value: 0)
        queue.async {
            record.add("first started")
            release.wait()
            record.add("first done")
        }
        #expect(eventually { record.snapshot == ["first started"] })
        queue.async { record.add("second") }
        Thread.sleep(forTimeInterval: 0.1)
        #expect(record.snapshot == ["first started"])
        release.signal()
        #expect(eventually { record.snapshot == ["first started", "first done", "second"] })
    }
}
