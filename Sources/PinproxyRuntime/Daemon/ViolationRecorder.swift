import Foundation
import PinproxyCore
import Synchronization

/// Where every trust decision that is not a plain "allow" goes: flood control,
/// then the durable violation log (and an optional in-memory sink for tests).
/// Shared by every loop; the flood gate is behind a mutex, the file has its
/// own writer thread, so no loop ever waits on a disk.
final class ViolationRecorder: @unchecked Sendable {
    private let file: ViolationLogFile?
    private let sink: ViolationSink?
    private let gate: Locked<ViolationFloodGate>
    /// The first event of each flood key, to describe its summary line.
    private let representatives = Locked<[String: ViolationEvent]>([:])
    /// When each flood key last had an RFC 7469 report sent.
    private let lastReported = Locked<[String: Date]>([:])
    /// Events recorded since start (written or counted), for `STATUS=`.
    let recordedCount = Atomic<Int>(0)

    /// The log's queue and failures, for `/metrics` (zeros without a file).
    var logQueue: (queued: Int, writeErrors: UInt64, dropped: Int) {
        guard let file else { return (0, 0, 0) }
        return (file.queuedLines, file.writeErrors, file.droppedLines)
    }

    init(file: ViolationLogFile?, sink: ViolationSink? = nil, burst: Int) {
        self.file = file
        self.sink = sink
        gate = Locked(ViolationFloodGate(burst: burst))
    }

    /// Records `event`; `then` runs on `loop` once the line is durable (or
    /// could not be written now — the block happens regardless, SPEC §4), or at
    /// once when flood control counts the event instead of writing it.
    func record(_ event: ViolationEvent, on loop: EventLoop, then: @escaping () -> Void) {
        let continuation = LoopBound(then)
        let key = Self.floodKey(event)
        let admission = gate.withLock { $0.admit(key: key, at: event.time) }
        recordedCount.add(1, ordering: .relaxed)
        sink?.record(event)
        guard admission == .write, let file else {
            loop.execute { continuation.value() }
            return
        }
        representatives.withLock { if $0[key] == nil { $0[key] = event } }
        file.append(event.jsonLine()) { _ in loop.execute { continuation.value() } }
    }

    /// Writes a summary line for every flood window that has ended (all of
    /// them when `closingAll`, on shutdown and rotation).
    func flushSummaries(now: Date, closingAll: Bool) {
        let summaries = gate.withLock { $0.closeWindows(before: closingAll ? nil : now, now: now) }
        guard let file, !summaries.isEmpty else { return }
        let events = representatives.withLock { table in
            summaries.map { table[$0.key] }
        }
        for (summary, event) in zip(summaries, events) {
            guard let event else { continue }
            file.append(Self.summaryLine(summary, event: event)) { _ in }
        }
    }

    /// Whether `event` deserves a `report_uri` report: the first of its key
    /// in a minute, so a client retrying in a loop cannot flood a collector.
    func claimReport(for event: ViolationEvent) -> Bool {
        let key = Self.floodKey(event)
        return lastReported.withLock { table in
            if let last = table[key], event.time.timeIntervalSince(last) < 60 { return false }
            if table.count > 10_000 { table = table.filter { event.time.timeIntervalSince($0.value) < 60 } }
            table[key] = event.time
            return true
        }
    }

    func reopen() { file?.reopen() }

    func close() { file?.close() }

    var droppedLines: Int { file?.droppedLines ?? 0 }

    /// Same host, reason, rule and served chain (SPEC §4).
    static func floodKey(_ event: ViolationEvent) -> String {
        var key = "\(event.host)|\(event.port)|\(event.reason.rawValue)|\(event.rule)|\(event.action.rawValue)"
        for certificate in event.servedChain {
            // Two hex digits per byte: unpadded hex would let "1"+"23" equal "12"+"3".
            key += "|" + Hex.lowercase(certificate.certificateSHA256)
        }
        return key
    }

    static func summaryLine(_ summary: ViolationFloodGate.Summary, event: ViolationEvent) -> [UInt8] {
        // Every value here is a normalised host, an identifier or a number:
        // nothing needs JSON escaping beyond what HostName already excludes.
        let text = "{\"time\":\"\(RFC3339Timestamp.milliseconds(summary.closedAt))\",\"event\":\"pin_violation_summary\","
            + "\"action\":\"\(event.action.rawValue)\",\"reason\":\"\(event.reason.rawValue)\","
            + "\"host\":\"\(event.host)\",\"port\":\(event.port),\"rule\":\"\(event.rule)\","
            + "\"count\":\(summary.count),\"first_time\":\"\(RFC3339Timestamp.milliseconds(summary.firstTime))\","
            + "\"last_time\":\"\(RFC3339Timestamp.milliseconds(summary.lastTime))\","
            + "\"config_generation\":\(event.configGeneration)}\n"
        return Array(text.utf8)
    }
}
