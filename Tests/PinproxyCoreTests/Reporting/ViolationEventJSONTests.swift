import Foundation
import Testing
@testable import PinproxyCore

private typealias P = FakePKI

private func event(target: String = "/v1/users?token=secret#section", detail: String = "no certificate in the validated chain matches a pinned public key",
                   servedChain: [CertificateFacts] = [P.leaf]) -> ViolationEvent {
    ViolationEvent(time: Date(timeIntervalSince1970: 1_796_040_000.123), action: .blocked, reason: .pinMismatch,
                   host: "api.example.com", port: 443, peerAddress: "127.0.0.1:9443", rule: "api.example.com",
                   policy: .pinPublicKeys, enforce: true, includeSubdomains: false,
                   knownPins: ["sha256/MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM="], servedChain: servedChain,
                   clientAddress: "127.0.0.1:50122", listener: "127.0.0.1:8080", configGeneration: 3,
                   requestMethod: "GET", requestTarget: target, detail: detail)
}

private func text(_ line: [UInt8]) -> String { String(decoding: line, as: UTF8.self) }

private let specKeys = ["time", "event", "action", "reason", "host", "port", "peer_address", "rule", "policy",
                        "enforce", "include_subdomains", "known_pins", "served_chain", "served_certificate_chain",
                        "client_address", "listener", "client_transport", "config_generation", "request", "detail"]

@Suite("Violation event JSON line (SPEC §4)")
struct ViolationEventJSONTests {
    @Test("the line is exactly the SPEC shape, byte for byte")
    func goldenLine() {
        let expected = #"{"time":"2026-11-30T12:00:00.123Z","event":"pin_violation","action":"blocked","#
            + #""reason":"pin_mismatch","host":"api.example.com","port":443,"peer_address":"127.0.0.1:9443","#
            + #""rule":"api.example.com","policy":"pin-public-keys","enforce":true,"include_subdomains":false,"#
            + #""known_pins":["sha256/MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM="],"#
            + #""served_chain":[{"subject":"CN=api.example.com","issuer":"CN=Example Intermediate","#
            + #""not_before":"2026-10-31T12:00:00Z","not_after":"2027-10-31T12:00:00Z","#
            + #""spki_sha256":"sha256/ERERERERERERERERERERERERERERERERERERERERERE=","#
            + #""cert_sha256":"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"}],"#
            + #""served_certificate_chain":["-----BEGIN CERTIFICATE-----\nMIIREhM=\n-----END CERTIFICATE-----\n"],"#
            + #""client_address":"127.0.0.1:50122","listener":"127.0.0.1:8080","client_transport":"http","config_generation":3,"#
            + #""request":{"method":"GET","target":"/v1/users"},"#
            + #""detail":"no certificate in the validated chain matches a pinned public key"}"#
            + "\n"
        #expect(text(event().jsonLine()) == expected)
    }

    @Test("the line parses back as JSON with every SPEC key in SPEC order")
    func parsesWithKeysInOrder() throws {
        let line = event(servedChain: [P.leaf, P.intermediate]).jsonLine()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
        #expect(Set(object.keys) == Set(specKeys))
        #expect(object["port"] as? Int == 443)
        #expect(object["enforce"] as? Bool == true)
        #expect(object["config_generation"] as? Int == 3)
        let chain = try #require(object["served_chain"] as? [[String: String]])
        #expect(chain.map { $0["subject"] } == ["CN=api.example.com", "CN=Example Intermediate"])
        let pems = try #require(object["served_certificate_chain"] as? [String])
        #expect(pems == ["-----BEGIN CERTIFICATE-----\nMIIREhM=\n-----END CERTIFICATE-----\n",
                         "-----BEGIN CERTIFICATE-----\nMIIiIyQ=\n-----END CERTIFICATE-----\n"])
        #expect(object["request"] as? [String: String] == ["method": "GET", "target": "/v1/users"])

        let body = text(line)
        let positions = try specKeys.map { key in
            try #require(body.range(of: "\"\(key)\":")?.lowerBound, "key \(key) is missing")
        }
        #expect(positions == positions.sorted())
    }

    @Test("exactly one newline, at the end")
    func oneTrailingNewline() {
        let line = event(detail: "line one\nline two\r\n").jsonLine()
        #expect(line.last == UInt8(ascii: "\n"))
        #expect(line.filter { $0 == UInt8(ascii: "\n") }.count == 1)
        #expect(!line.contains(UInt8(ascii: "\r")))
    }

    @Test("the query string and fragment never appear",
          arguments: ["/v1/users?token=secret#section", "/v1/users#section?token=secret", "/v1/users?token=secret",
                      "/v1/users"])
    func queryNeverLogged(_ target: String) throws {
        var logged = event(target: target)
        #expect(logged.requestTarget == "/v1/users")
        logged.requestTarget = target
        #expect(logged.requestTarget == "/v1/users")
        let body = text(logged.jsonLine())
        #expect(!body.contains("secret"))
        #expect(!body.contains("section"))
        #expect(body.contains(#""target":"/v1/users"}"#))
    }

    @Test("control characters, quotes and backslashes are escaped; UTF-8 is kept and round-trips")
    func escaping() throws {
        let detail = "a\u{01}b\"c\\d\te\u{1F}f\u{7F}é→𝄞\u{00}"
        let body = text(event(detail: detail).jsonLine())
        #expect(body.contains(#""detail":"a\u0001b\"c\\d\te\u001ff\u007f"# + "é→𝄞" + #"\u0000"}"#))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        #expect(object["detail"] as? String == detail)
    }

    // Found by FuzzViolationLogLine: a served certificate's subject is chosen
    // by whoever made it; raw C1 controls (U+009B is CSI to a terminal) or
    // U+2028 would reach `pinproxy tail --json` as written.
    @Test("DEL, C1 controls and U+2028/U+2029 are escaped too, and round-trip")
    func terminalControlsEscaped() throws {
        let detail = "CN=x\u{9B}2J\u{85}y\u{2028}z\u{2029}\u{7F}\u{A0}é"
        let line = event(detail: detail).jsonLine()
        let body = text(line)
        #expect(body.contains(#""detail":"CN=x\u009b2J\u0085y\u2028z\u2029\u007f"# + "\u{A0}é\"}"))
        #expect(!body.unicodeScalars.contains { (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029 })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        #expect(object["detail"] as? String == detail)
    }

    @Test("an event's action follows the decision")
    func actionFromDecision() {
        #expect(ViolationEvent.Action(.allow) == nil)
        #expect(ViolationEvent.Action(.allowAndReport(reason: .pinMismatch, detail: "")) == .reported)
        #expect(ViolationEvent.Action(.block(reason: .pinMismatch, detail: "")) == .blocked)
        #expect(ViolationEvent.Action.allCases.map(\.rawValue) == ["blocked", "reported"])
    }
}
