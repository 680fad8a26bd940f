import Foundation
import PinproxyCore

/// A custom rule's verdicts, reused for `cache` (SPEC §2.1), shared by every
/// loop. Only the command's own answers are kept (`CustomVerdict.isDefinitive`).
/// Bounded: when full, expired entries go first, then the oldest.
final class CustomVerdictCache: @unchecked Sendable {
    private struct Entry {
        let verdict: CustomVerdict
        let expires: ContinuousClock.Instant
    }
    private let lifetime: Duration
    private let capacity: Int
    private let entries = Locked<[CustomCheckKey: Entry]>([:])

    init(lifetime: Duration, capacity: Int = 4096) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// The verdict for `key` while it is fresh.
    func verdict(for key: CustomCheckKey, now: ContinuousClock.Instant = .now) -> CustomVerdict? {
        guard lifetime > .zero else { return nil }
        return entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            guard entry.expires > now else {
                entries[key] = nil
                return nil
            }
            return entry.verdict
        }
    }

    func store(_ verdict: CustomVerdict, for key: CustomCheckKey, now: ContinuousClock.Instant = .now) {
        guard lifetime > .zero, verdict.isDefinitive else { return }
        entries.withLock { entries in
            if entries.count >= capacity, entries[key] == nil {
                entries = entries.filter { $0.value.expires > now }
                if entries.count >= capacity, let oldest = entries.min(by: { $0.value.expires < $1.value.expires }) {
                    entries[oldest.key] = nil
                }
            }
            entries[key] = Entry(verdict: verdict, expires: now + lifetime)
        }
    }
}
