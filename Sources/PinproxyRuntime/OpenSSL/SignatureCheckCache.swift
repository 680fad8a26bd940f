
/// Remembers whether one certificate's signature verifies with another's key,
/// by the two certificates' SHA-256 fingerprints.
///
/// Following the served chain's signing path (for pins on intermediates and
/// the violation log) checks each issuer's signature again after OpenSSL has
/// validated the chain: two ECDSA verifications, a third of the CPU of a fresh
/// upstream handshake (callgrind). The answer is a pure function of the two
/// certificates, and a server sends the same chain on every new connection,
/// so it is computed once per pair and looked up afterwards.
///
/// Shared by all event loops (one lock per lookup, never held while
/// verifying); bounded: when full it is emptied and refills from live traffic.
final class SignatureCheckCache: Sendable {
    static let shared = SignatureCheckCache(capacity: 4096)

    private struct Key: Hashable {
        var child: [UInt8]
        var issuer: [UInt8]
    }

    private let capacity: Int
    private let entries = Locked<[Key: Bool]>([:])

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The remembered answer for `child` signed by `issuer`, or `verify()`'s, remembered.
    func verifies(child: [UInt8], issuer: [UInt8], verify: () -> Bool) -> Bool {
        let key = Key(child: child, issuer: issuer)
        if let known = entries.withLock({ $0[key] }) { return known }
        let result = verify()
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = result
        }
        return result
    }

    var count: Int { entries.withLock { $0.count } }
}
