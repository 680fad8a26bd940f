import Foundation

/// An open-addressing hash table from host names to positions in a list of
/// rules: the index `PolicyTable` keeps for each kind of key.
///
/// A slot holds only the position (4 bytes); the name it stands for is read
/// back from the rules through `name(_:)`, so 100,000 rules cost 1 MiB of
/// slots rather than a dictionary entry with a key string and a copy of the
/// rule each. The table is at most half full, so a probe ends after a slot or
/// two; lookups hash the bytes of a substring of the host in place and
/// neither allocate nor touch the rules beyond the one candidate compared.
struct HostNameIndex: Sendable {
    private static let empty: Int32 = -1
    private var slots: [Int32]
    private var mask: Int

    /// A table for about `expected` names (it grows when more are inserted).
    init(expected: Int = 0) {
        let capacity = Self.capacity(for: expected)
        slots = Array(repeating: Self.empty, count: capacity)
        mask = capacity - 1
    }

    private(set) var count = 0

    /// A power of two at least twice `count` (never less than 8).
    private static func capacity(for count: Int) -> Int {
        var capacity = 8
        while capacity < count * 2 { capacity <<= 1 }
        return capacity
    }

    /// Records `position` for `key` unless the key is there already (the first
    /// one given wins); `name` gives the key of an earlier position.
    mutating func insert(_ position: Int, key: Substring, name: (Int) -> Substring) {
        if (count + 1) * 2 > slots.count { grow(name: name) }
        var slot = Self.hash(key.utf8) & mask
        while slots[slot] != Self.empty {
            if Self.sameBytes(name(Int(slots[slot])), key) { return }
            slot = (slot + 1) & mask
        }
        slots[slot] = Int32(position)
        count += 1
    }

    /// The position recorded for `key`, if any.
    func find(_ key: Substring, name: (Int) -> Substring) -> Int? {
        var slot = Self.hash(key.utf8) & mask
        while true {
            let position = slots[slot]
            if position == Self.empty { return nil }
            if Self.sameBytes(name(Int(position)), key) { return Int(position) }
            slot = (slot + 1) & mask
        }
    }

    /// Byte equality over the strings' contiguous UTF-8 (host names are
    /// ASCII; no Unicode comparison is wanted): `UTF8View.elementsEqual` is
    /// generic and walked the views byte by byte, some 1,400 instructions per
    /// request for a gateway's two policy lookups.
    static func sameBytes(_ a: Substring, _ b: Substring) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let contiguous = a.utf8.withContiguousStorageIfAvailable { first in
            b.utf8.withContiguousStorageIfAvailable { second in
                first.isEmpty || memcmp(first.baseAddress!, second.baseAddress!, first.count) == 0
            }
        }
        return (contiguous ?? nil) ?? a.utf8.elementsEqual(b.utf8)
    }

    private mutating func grow(name: (Int) -> Substring) {
        let old = slots.filter { $0 != Self.empty }
        let capacity = Self.capacity(for: old.count + 1) * 2
        slots = Array(repeating: Self.empty, count: capacity)
        mask = capacity - 1
        count = 0
        // Re-inserted in slot order: positions are distinct, so no comparison decides anything here.
        for position in old {
            var slot = Self.hash(name(Int(position)).utf8) & mask
            while slots[slot] != Self.empty { slot = (slot + 1) & mask }
            slots[slot] = position
            count += 1
        }
    }

    /// FNV-1a over the bytes, then a multiply-xorshift finish so that the low
    /// bits the mask keeps depend on every byte. Keys are the operator's
    /// configuration, not the peer's: a peer's host only probes.
    /// Over the contiguous UTF-8 of a native string: walking the generic
    /// `Substring.UTF8View` cost some 40 instructions a byte, and every
    /// forward request hashes its host.
    @inline(__always)
    private static func hash(_ bytes: Substring.UTF8View) -> Int {
        bytes.withContiguousStorageIfAvailable(hash) ?? hash(Array(bytes))
    }

    private static func hash(_ bytes: some Sequence<UInt8>) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        hash ^= hash >> 32
        hash &*= 0xd6e8_feb8_6659_fd93
        hash ^= hash >> 32
        return Int(truncatingIfNeeded: hash)
    }
}
