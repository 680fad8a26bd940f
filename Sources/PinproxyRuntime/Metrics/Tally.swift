import Synchronization

/// One counter with one writer (the loop whose lane it is in) and any number
/// of readers (a scrape): the writer adds with a relaxed load and store, no
/// locked instruction and no lock; a reader sees some recent value.
final class Tally: Sendable {
    private let value = Atomic<UInt64>(0)

    init() {}

    /// Only from the lane's own loop.
    @inline(__always)
    func add(_ amount: UInt64 = 1) {
        value.store(value.load(ordering: .relaxed) &+ amount, ordering: .relaxed)
    }

    var count: UInt64 { value.load(ordering: .relaxed) }
}

/// A gauge one loop sets (a time, a size) and a scrape reads.
final class Reading: Sendable {
    private let value = Atomic<Int64>(0)

    init() {}

    @inline(__always)
    func set(_ newValue: Int64) { value.store(newValue, ordering: .relaxed) }

    var current: Int64 { value.load(ordering: .relaxed) }
}

extension Array where Element == Tally {
    /// `count` fresh tallies.
    static func tallies(_ count: Int) -> [Tally] { (0..<count).map { _ in Tally() } }
}
