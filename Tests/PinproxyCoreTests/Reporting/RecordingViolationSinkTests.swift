import Foundation
import Testing
@testable import PinproxyCore

@Suite("Recording violation sink")
struct RecordingViolationSinkTests {
    private func event(_ generation: Int) -> ViolationEvent {
        ViolationEvent(time: FakePKI.now, action: .reported, reason: .hostnameMismatch, host: "a.example", port: 443,
                       peerAddress: "127.0.0.1:9443", rule: ViolationEvent.defaultPolicyRule, policy: .default,
                       enforce: false, includeSubdomains: false, knownPins: [], servedChain: [],
                       clientAddress: "127.0.0.1:1", listener: "127.0.0.1:8080", configGeneration: generation,
                       requestMethod: "GET", requestTarget: "/", detail: "d")
    }

    @Test("events are kept in the order they were recorded")
    func keepsOrder() {
        let sink = RecordingViolationSink()
        for generation in 1...3 { sink.record(event(generation)) }
        #expect(sink.events.map(\.configGeneration) == [1, 2, 3])
        #expect(sink.events.first?.rule == "default_policy")
    }

    @Test("concurrent recording loses no event")
    func concurrentRecording() async {
        let sink = RecordingViolationSink()
        await withTaskGroup(of: Void.self) { group in
            for generation in 0..<200 {
                group.addTask { sink.record(self.event(generation)) }
            }
        }
        #expect(sink.events.map(\.configGeneration).sorted() == Array(0..<200))
    }
}
