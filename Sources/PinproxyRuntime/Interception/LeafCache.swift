import Foundation
import PinproxyCore

/// The leaves of one CA generation, by host: minted once, served until a day
/// before they expire (SPEC §3.1). The cache belongs to one loaded
/// `InterceptionAuthority`, so a new CA generation starts empty.
///
/// Shared by every event loop: one lock per lookup, never held while a leaf
/// is signed; two loops that mint the same host at once keep the first one
/// stored, so every caller after that gets the same leaf. Bounded: names
/// under a wildcard or subtree rule are client-chosen, so when full the
/// stale leaves go, and if none is stale, all of them (they refill from
/// live traffic at one signature each).
final class LeafCache: Sendable {
    static let defaultCapacity = 4096

    private let entries = Locked<[HostName: InterceptionLeaf]>([:])
    private let capacity: Int

    init(capacity: Int = LeafCache.defaultCapacity) {
        self.capacity = capacity
    }

    /// The cached leaf for `host` when `isFresh`, else `mint()`'s, stored.
    func leaf(for host: HostName, isFresh: (InterceptionLeaf) -> Bool,
              mint: () throws -> InterceptionLeaf) throws -> InterceptionLeaf {
        if let cached = entries.withLock({ $0[host] }), isFresh(cached) { return cached }
        let minted = try mint()
        return entries.withLock { entries in
            if let raced = entries[host], isFresh(raced) { return raced }
            if entries[host] == nil && entries.count >= capacity {
                entries = entries.filter { isFresh($0.value) }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[host] = minted
            return minted
        }
    }

    var count: Int { entries.withLock { $0.count } }
}
