import Foundation
import PinproxyCore

/// Runs custom policies' commands for the whole process (SPEC §2.1), on a
/// thread and event loop of its own, so that no serving loop ever spawns,
/// reads a pipe or reaps a child:
///
/// - questions with the same key (rule, host, port, served chain) asked
///   while one is being answered share that one child;
/// - at most `limit` children run at once (`limits.custom_checks`, the
///   latest configuration's); the others wait in the order they were asked.
///
/// Completions run on the executor's thread; callers hop back to their own
/// loop (`CustomEvaluation.ask`). The thread starts with the first question.
final class CustomCheckExecutor: @unchecked Sendable {
    private let started = Locked<EventLoop?>(nil)

    /// The state below is touched only on the executor's thread.
    private final class Job {
        let request: CustomCheckRequest
        var waiters: [@Sendable (CustomVerdict) -> Void] = []
        var process: CustomCheckProcess?
        init(request: CustomCheckRequest) { self.request = request }
    }
    private var jobs: [CustomCheckKey: Job] = [:]
    private var queue: [Job] = []
    private var queueHead = 0
    private var running = 0
    private var limit = Limits().customChecks
    /// What `/metrics` shows; written on the executor's thread only.
    private let counts = Locked(MetricsSnapshot.CustomChecks())

    /// Commands started, shared, running and waiting, now.
    var snapshot: MetricsSnapshot.CustomChecks { counts.withLock { $0 } }

    init() {}

    deinit {
        started.withLock { loop in
            guard let loop else { return }
            loop.execute { loop.stop() }
        }
    }

    /// Asks the command `request` names, unless the same question is being
    /// answered already; `completion` runs once on the executor's thread.
    func ask(_ request: CustomCheckRequest, limit: Int, completion: @escaping @Sendable (CustomVerdict) -> Void) {
        guard let loop = loop() else {
            return completion(.failed(detail: "the custom command cannot be run: no event loop for it"))
        }
        let bound = LoopBound((self, loop))
        loop.execute {
            let (executor, loop) = bound.value
            executor.limit = limit
            executor.enqueue(request, on: loop, completion: completion)
        }
    }

    /// `ask`, waiting for the verdict on the calling thread (`probe --chain`,
    /// which has no loop of its own). Never call it on a serving loop.
    func verdict(for request: CustomCheckRequest, limit: Int) -> CustomVerdict {
        let answer = NSCondition()
        let verdict = Locked<CustomVerdict?>(nil)
        ask(request, limit: limit) { answered in
            answer.lock()
            verdict.withLock { $0 = answered }
            answer.signal()
            answer.unlock()
        }
        answer.lock()
        while verdict.withLock({ $0 }) == nil { answer.wait() }
        answer.unlock()
        return verdict.withLock { $0 } ?? .failed(detail: "no verdict")
    }

    private func loop() -> EventLoop? {
        started.withLock { started -> EventLoop? in
            if let started { return started }
            guard let loop = try? EventLoop() else { return nil }
            Thread.startNamed("pinproxy-checks") { loop.run() }
            started = loop
            return loop
        }
    }

    private func enqueue(_ request: CustomCheckRequest, on loop: EventLoop,
                         completion: @escaping @Sendable (CustomVerdict) -> Void) {
        if let job = jobs[request.key] {
            job.waiters.append(completion)
            counts.withLock { $0.shared += 1 }
            return
        }
        let job = Job(request: request)
        job.waiters.append(completion)
        jobs[request.key] = job
        queue.append(job)
        startWaiting(on: loop)
    }

    private func startWaiting(on loop: EventLoop) {
        while running < limit, queueHead < queue.count {
            let job = queue[queueHead]
            queueHead += 1
            running += 1
            counts.withLock { $0.started += 1 }
            // Strong: a running child keeps the executor (and its thread's work) alive.
            let process = CustomCheckProcess(loop: loop, request: job.request) { [self] verdict in
                self.finish(job, verdict, on: loop)
            }
            job.process = process
            process.start()
        }
        if queueHead == queue.count {
            queue.removeAll(keepingCapacity: true)
            queueHead = 0
        }
        counts.withLock { [running, waiting = queue.count - queueHead] in
            $0.running = running
            $0.waiting = waiting
        }
    }

    private func finish(_ job: Job, _ verdict: CustomVerdict, on loop: EventLoop) {
        running -= 1
        jobs[job.request.key] = nil
        // The process is inside its own completion: let it go on the next turn.
        let retired = LoopBound(job.process)
        job.process = nil
        loop.execute { withExtendedLifetime(retired) {} }
        for waiter in job.waiters { waiter(verdict) }
        startWaiting(on: loop)
    }
}
