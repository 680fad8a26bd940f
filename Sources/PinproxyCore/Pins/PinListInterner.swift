/// Shares one copy of each distinct pin list, and of each distinct pin, among
/// the rules of one configuration.
///
/// Large configurations repeat themselves: the hosts of one fleet pin the same
/// keys, and a backup key is kept for many of them. A parsed pin owns its
/// 32-byte digest (about 80 bytes on the heap) and a list its own array, so
/// without sharing 100,000 rules keep 200,000 digests, most of them equal.
/// Interned values are equal to what was given, so nothing that compares or
/// hashes pins can tell; only the storage is shared.
struct PinListInterner {
    private var lists: Set<[SPKIPin]> = []
    private var pins: Set<SPKIPin> = []

    /// `list`, or an equal list already given (and its pins).
    mutating func intern(_ list: [SPKIPin]) -> [SPKIPin] {
        let (isNew, known) = lists.insert(list)
        guard isNew else { return known }
        let shared = list.map { pins.insert($0).memberAfterInsert }
        lists.update(with: shared)
        return shared
    }
}
