import Testing
@testable import PinproxyCore

@Suite("FieldSection: field lines kept as received bytes")
struct FieldSectionTests {
    @Test("a parsed section equals one built from the same fields, whatever the OWS on the wire")
    func parsedEqualsBuilt() throws {
        let head = try #require(HTTPTestSupport.responseHead("HTTP/1.1 200 OK\r\nX-A:   1  \r\nContent-Length:0\r\n\r\n"))
        let built = FieldSection([HTTPField(name: "X-A", value: "1"), HTTPField(name: "Content-Length", value: "0")])
        #expect(head.fieldSection == built)
        #expect(head.fieldSection.hashValue == built.hashValue)
        #expect(head.fieldSection != FieldSection([HTTPField(name: "X-A", value: "10")]))
        // Lengths are hashed, so a name and a value cannot trade bytes.
        #expect(FieldSection([HTTPField(name: "ab", value: "c")]) != FieldSection([HTTPField(name: "a", value: "bc")]))
    }

    @Test("an obs-text value is relayed byte for byte, not re-encoded")
    func obsTextRelayedExactly() throws {
        let raw: [UInt8] = Array("HTTP/1.1 200 OK\r\nX-Legacy: caf".utf8) + [0xE9] + Array("\r\nContent-Length: 0\r\n\r\n".utf8)
        let result = raw.withUnsafeBytes { ResponseHeadParser.parse($0, requestMethod: "GET", limits: HeadLimits()) }
        guard case .complete(let head, _) = result else { Issue.record("not parsed: \(result)"); return }
        let relayed = ClientResponseWriter.serialise(head, clientVersion: .http11, keepAlive: true)
        let expected: [UInt8] = Array("HTTP/1.1 200 OK\r\nX-Legacy: caf".utf8) + [0xE9]
            + Array("\r\nContent-Length: 0\r\nVia: 1.1 pinproxy\r\n\r\n".utf8)
        #expect(relayed == expected)
        // The String view still decodes it (with a replacement character).
        #expect(head.fields[0].value == "caf\u{FFFD}")
    }

    @Test("fields nominated by Connection are removed in any letter case; others keep their spelling")
    func nominatedFieldsRemoved() throws {
        let head = try #require(HTTPTestSupport.responseHead(
            "HTTP/1.1 200 OK\r\nconnection: X-HOP, keep-alive\r\nx-hop: 1\r\nX-Kept: Value\r\nKEEP-ALIVE: 5\r\ncontent-LENGTH: 2\r\n\r\n"))
        let relayed = HTTPTestSupport.text(ClientResponseWriter.serialise(head, clientVersion: .http11, keepAlive: true))
        #expect(relayed == "HTTP/1.1 200 OK\r\nX-Kept: Value\r\nContent-Length: 2\r\nVia: 1.1 pinproxy\r\n\r\n")
    }

    @Test("known names are recognised whatever their case, and only whole names", arguments: [
        ("Content-Length", KnownFieldName.contentLength), ("TRANSFER-ENCODING", .transferEncoding), ("te", .te),
        ("Te", .te), ("Host", .host), ("Upgrade", .upgrade), ("Trailer", .trailer), ("Keep-Alive", .keepAlive),
        ("Connection", .connection), ("Proxy-Connection", .proxyConnection), ("Proxy-Authorization", .proxyAuthorization),
        ("Content-Lengths", .other), ("Hostx", .other), ("X-Host", .other), ("Connectiom", .other), ("", .other),
        ("Content_Length", .framingAlias), ("transfer_encoding", .framingAlias), ("TRANSFER_ENCODING", .framingAlias),
        ("Proxy_Connection", .other), ("Content_Lengthx", .other), ("Content__ength", .other),
    ])
    func knownNames(name: String, known: KnownFieldName) {
        #expect(KnownFieldName(name.utf8) == known)
    }
}

@Suite("HTTPSyntax byte classes")
struct HTTPSyntaxByteClassTests {
    @Test("tchar is exactly RFC 9110 5.6.2's set, for all 256 bytes")
    func tokenCharacters() {
        let tchar = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(HTTPSyntax.isTokenChar(byte) == tchar.contains(byte), "byte \(byte)")
        }
        // One entry for every byte value: a shorter table would be read past its end.
        #expect(HTTPSyntax.tokenTable.utf8CodeUnitCount == 256)
    }
}
