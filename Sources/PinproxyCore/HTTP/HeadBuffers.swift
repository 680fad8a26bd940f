/// The arrays heads are parsed and serialised into, kept from one exchange to
/// the next and shared by the sessions of one loop.
///
/// A keep-alive exchange parses two heads (each one array of field lines and
/// one copy of the field bytes) and serialises two; made fresh, those were six
/// allocations and six frees a request. A session borrows the loop's buffers
/// only while it parses or serialises, so an idle connection holds none
/// (the per-connection memory stays what it was).
///
/// Taking a buffer empties it but keeps its capacity; one still referenced
/// elsewhere (a head kept in a copy) is not reused but replaced, by the
/// array's copy-on-write, so reuse can never show one head's bytes in another.
/// Only a few buffers are kept, and none larger than an ordinary head needs,
/// so an unusually large head is not held for good.
public struct HeadBuffers: Sendable {
    // Fixed slots, not arrays of arrays: a take or a give-back is a capacity
    // test and a swap (callgrind: a stack of arrays cost ~150 instructions a
    // take, a third of what the allocation it saved cost). An empty slot has
    // no capacity. Between exchanges a loop holds the two heads' lines and
    // bytes and one serialised head: two slots of lines, three of bytes.
    private var lines0: [FieldSection.Line] = []
    private var lines1: [FieldSection.Line] = []
    private var bytes0: [UInt8] = []
    private var bytes1: [UInt8] = []
    private var bytes2: [UInt8] = []

    /// Larger buffers are freed when given back.
    static let largestKeptLineCount = 128
    static let largestKeptByteCount = 16 * 1024

    public init() {}

    /// An empty array of field lines, with room for an ordinary head.
    mutating func takeLines() -> [FieldSection.Line] {
        var lines: [FieldSection.Line] = []
        if lines0.capacity != 0 {
            swap(&lines, &lines0)
        } else if lines1.capacity != 0 {
            swap(&lines, &lines1)
        } else {
            lines.reserveCapacity(FieldLineScanner.typicalFieldCount)
            return lines
        }
        lines.removeAll(keepingCapacity: true)
        return lines
    }

    /// An empty byte array with room for at least `capacity` bytes (by
    /// default, a serialised head's).
    mutating func takeBytes(capacity: Int = HeadWriter.typicalCapacity) -> [UInt8] {
        var bytes: [UInt8] = []
        if bytes0.capacity != 0 {
            swap(&bytes, &bytes0)
        } else if bytes1.capacity != 0 {
            swap(&bytes, &bytes1)
        } else if bytes2.capacity != 0 {
            swap(&bytes, &bytes2)
        }
        bytes.removeAll(keepingCapacity: true)
        bytes.reserveCapacity(capacity)
        return bytes
    }

    mutating func giveBack(lines: consuming [FieldSection.Line]) {
        guard lines.capacity <= Self.largestKeptLineCount else { return }
        if lines0.capacity == 0 {
            lines0 = lines
        } else if lines1.capacity == 0 {
            lines1 = lines
        }
    }

    /// Keeps `bytes` (a serialised head once written, or a section's copy) for reuse.
    public mutating func giveBack(bytes: consuming [UInt8]) {
        guard bytes.capacity <= Self.largestKeptByteCount else { return }
        if bytes0.capacity == 0 {
            bytes0 = bytes
        } else if bytes1.capacity == 0 {
            bytes1 = bytes
        } else if bytes2.capacity == 0 {
            bytes2 = bytes
        }
    }

    /// Keeps the arrays of a head that is done with.
    mutating func giveBack(_ section: FieldSection) {
        giveBack(lines: section.lines)
        giveBack(bytes: section.storage)
    }

    /// How many buffers of each kind are kept (for tests).
    var keptCounts: (lines: Int, bytes: Int) {
        ([lines0, lines1].filter { $0.capacity != 0 }.count, [bytes0, bytes1, bytes2].filter { $0.capacity != 0 }.count)
    }
}
