import Foundation
import Testing
@testable import PinproxyRuntime

@Suite("ViolationFloodGate")
struct ViolationFloodGateTests {
    private let start = Date(timeIntervalSince1970: 1_800_000_000)

    private func at(_ seconds: TimeInterval) -> Date { start.addingTimeInterval(seconds) }

    @Test("burst + N occurrences in one window give burst writes and one summary of exactly N",
          arguments: [(10, 0), (10, 1), (10, 37), (1, 5), (0, 4)])
    func exactCounts(burst: Int, extra: Int) {
        var gate = ViolationFloodGate(burst: burst)
        let admissions = (0..<(burst + extra)).map { gate.admit(key: "k", at: at(Double($0) * 0.5)) }
        #expect(admissions == Array(repeating: .write, count: burst) + Array(repeating: .suppress, count: extra))
        let summaries = gate.closeWindows(before: at(60), now: at(60))
        if extra == 0 {
            #expect(summaries == [])
        } else {
            #expect(summaries == [ViolationFloodGate.Summary(
                key: "k", count: extra,
                firstTime: at(Double(burst) * 0.5), lastTime: at(Double(burst + extra - 1) * 0.5),
                closedAt: at(60))])
        }
        #expect(gate.openWindowCount == 0)
    }

    @Test("keys are counted independently")
    func independentKeys() {
        var gate = ViolationFloodGate(burst: 2)
        let sequence = ["a", "b", "a", "a", "b", "a", "c"].map { gate.admit(key: $0, at: at(1)) }
        #expect(sequence == [.write, .write, .write, .suppress, .write, .suppress, .write])
        let summaries = gate.closeWindows(now: at(5))
        #expect(summaries == [ViolationFloodGate.Summary(key: "a", count: 2, firstTime: at(1), lastTime: at(1), closedAt: at(5))])
    }

    @Test("a window still open is not closed by the periodic call, only once it has ended")
    func periodicClose() {
        var gate = ViolationFloodGate(burst: 1, window: 60)
        _ = gate.admit(key: "k", at: at(0))
        _ = gate.admit(key: "k", at: at(10))
        #expect(gate.closeWindows(before: at(59), now: at(59)) == [])
        #expect(gate.closeWindows(before: at(61), now: at(61))
                == [ViolationFloodGate.Summary(key: "k", count: 1, firstTime: at(10), lastTime: at(10), closedAt: at(60))])
        #expect(gate.admit(key: "k", at: at(62)) == .write)
    }

    @Test("an occurrence after the window ended starts a new burst and keeps the old summary for the next close")
    func expiredInsideAdmit() {
        var gate = ViolationFloodGate(burst: 1, window: 60)
        let admissions = [0, 1, 2, 70, 71].map { gate.admit(key: "k", at: at(Double($0))) }
        #expect(admissions == [.write, .suppress, .suppress, .write, .suppress])
        #expect(gate.closeWindows(now: at(80)) == [
            ViolationFloodGate.Summary(key: "k", count: 2, firstTime: at(1), lastTime: at(2), closedAt: at(60)),
            ViolationFloodGate.Summary(key: "k", count: 1, firstTime: at(71), lastTime: at(71), closedAt: at(80)),
        ])
    }

    @Test("writes plus summarised counts add up to every occurrence over many windows")
    func conservation() {
        var gate = ViolationFloodGate(burst: 3, window: 10)
        var writes = 0
        var summarised = 0
        for second in 0..<100 {
            for key in ["x", "y"] where gate.admit(key: key, at: at(Double(second))) == .write {
                writes += 1
            }
            if second % 7 == 0 {
                summarised += gate.closeWindows(before: at(Double(second)), now: at(Double(second))).map(\.count).reduce(0, +)
            }
        }
        summarised += gate.closeWindows(now: at(100)).map(\.count).reduce(0, +)
        #expect(writes == 2 * 10 * 3)
        #expect(writes + summarised == 200)
    }
}
