import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// The flood-control key (SPEC §4: same host, reason, rule and served chain).
@Suite("ViolationRecorder flood key")
struct ViolationRecorderKeyTests {
    static func event(servedDigest: [UInt8]) -> ViolationEvent {
        let certificate = CertificateFacts(der: [0x30], spkiSHA256: [], certificateSHA256: servedDigest,
                                           subject: "CN=a", issuer: "CN=b",
                                           notBefore: Date(timeIntervalSince1970: 0), notAfter: Date(timeIntervalSince1970: 1))
        return ViolationEvent(time: Date(timeIntervalSince1970: 0), action: .blocked, reason: .pinMismatch,
                              host: "api.example.com", port: 443, peerAddress: "127.0.0.1:443", rule: "api.example.com",
                              policy: .pinPublicKeys, enforce: true, includeSubdomains: false, knownPins: [],
                              servedChain: [certificate], clientAddress: "127.0.0.1:1", listener: "127.0.0.1:8080",
                              configGeneration: 1, requestMethod: "GET", requestTarget: "/", detail: "")
    }

    @Test("different served chains never share a key, even when their unpadded hex would")
    func chainsDoNotCollide() {
        let first = ViolationRecorder.floodKey(Self.event(servedDigest: [0x01, 0x23]))
        let second = ViolationRecorder.floodKey(Self.event(servedDigest: [0x12, 0x03]))
        #expect(first != second)
        #expect(first.hasSuffix("|0123"))
    }

    @Test("the same event has the same key")
    func sameEventSameKey() {
        #expect(ViolationRecorder.floodKey(Self.event(servedDigest: [0xAB])) ==
                ViolationRecorder.floodKey(Self.event(servedDigest: [0xAB])))
    }
}
