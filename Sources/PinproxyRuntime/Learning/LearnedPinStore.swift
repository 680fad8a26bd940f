import Foundation
import PinproxyCore

/// Every learning rule's learned pins (SPEC §2.1 `"pins": "learn"`), shared
/// by all event loops and, through reloads, by every configuration generation
/// of one daemon: the in-memory truth each full handshake of a learning rule
/// reads, with `learned-pins.json` behind it.
///
/// Invariants:
/// - A rule learns once: `learn` keeps the first candidate and hands every
///   later one the pins that won, under one lock, so two loops learning the
///   same rule at once agree on one set and the other connection is judged
///   against it.
/// - Memory changes at once, the file after: writes run on one serial
///   background queue (never on an event loop), each a read-merge-write of the
///   rule learned, so an entry a person deleted from the file meanwhile stays
///   deleted (SIGHUP then re-arms it), and a file that no longer reads is
///   never overwritten.
/// - `reload` reads the file on that same queue, after every write already
///   queued, so a reload never loses a learned rule that was on its way to disk.
final class LearnedPinStore: Sendable {
    let file: LearnedPinFile
    /// false for `probe`: it evaluates as the daemon would, learns nothing and writes nothing.
    let records: Bool
    private let entries = Locked<[String: LearnedPins]>([:])
    private let logger: Logger
    /// One queue for the process's learned-pin file I/O.
    private static let fileQueue = DispatchQueue(label: "pinproxy.learned-pins")

    init(file: LearnedPinFile, records: Bool, logger: Logger = .shared) {
        self.file = file
        self.records = records
        self.logger = logger
    }

    /// Replaces what is in memory with what the file says now (start, SIGHUP).
    /// Throws, changing nothing, when the file cannot be read or trusted. A
    /// reload rejected later for another reason keeps what was read here: the
    /// file, not the generation, says what a rule has learned.
    func reload() throws(LearnedPinFileError) {
        let file = self.file
        let result = Self.fileQueue.sync { Result { () throws(LearnedPinFileError) in try file.read() } }
        let document = try result.get()
        entries.withLock { $0 = document.rules }
    }

    /// What `rule` has learned; nil while it has learned nothing.
    func pins(forRule rule: String) -> LearnedPins? {
        entries.withLock { $0[rule] }
    }

    /// Records `candidate` for `rule` unless the rule has already learned, and
    /// returns the pins that stand: `candidate`, or those learned first.
    func learn(_ candidate: LearnedPins, forRule rule: String) -> LearnedPins {
        guard records else { return pins(forRule: rule) ?? candidate }
        let (winner, isNew) = entries.withLock { entries -> (LearnedPins, Bool) in
            if let learned = entries[rule] { return (learned, false) }
            entries[rule] = candidate
            return (candidate, true)
        }
        if isNew {
            logger.log(.info, "learned-pins", "\(rule): learned \(candidate.pins.map(\.description).joined(separator: ", "))"
                       + " from \(candidate.host ?? rule) (trust on first use)")
            let (file, logger) = (self.file, self.logger)
            Self.fileQueue.async { Self.persist(candidate, forRule: rule, in: file, logger: logger) }
        }
        return winner
    }

    /// Blocks until every write queued so far is on disk (or has failed).
    func waitForWrites() {
        Self.fileQueue.sync {}
    }

    private static func persist(_ learned: LearnedPins, forRule rule: String, in file: LearnedPinFile, logger: Logger) {
        do throws(LearnedPinFileError) {
            var document = try file.read()
            document.rules[rule] = learned
            try file.write(document)
        } catch {
            // The pins stay enforced in memory; the next start reads the file and refuses it if it is unusable.
            logger.log(.error, "learned-pins", "\(rule): the learned pins could not be saved: \(error)")
        }
    }
}
