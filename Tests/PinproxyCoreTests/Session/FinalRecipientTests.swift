import Testing
@testable import PinproxyCore

/// RFC 9110 §7.6.2 in the session: a TRACE or OPTIONS with `Max-Forwards: 0`
/// is answered by pinproxy and nothing goes upstream; above zero it goes with
/// one less.
@Suite("SessionMachine: pinproxy as the final recipient of TRACE and OPTIONS")
struct FinalRecipientTests {
    let rules = SessionScript.rules()

    @Test("TRACE at zero is reflected as message/http, without the credentials it carried",
          arguments: [ListenerConfiguration.Mode.forward, .gateway(upstream: SessionScript.api)])
    func trace(mode: ListenerConfiguration.Mode) throws {
        var script = SessionScript(mode: mode)
        let request = "TRACE http://api.example.com/t?q=1 HTTP/1.1\r\nHost: api.example.com\r\nMax-Forwards: 0\r\n"
            + "Authorization: Basic c2VjcmV0\r\nX-Seen: yes\r\nCookie: session=secret\r\nproxy-authorization: Basic c2VjcmV0\r\n"
            + "Via: 1.1 edge\r\n\r\n"
        let actions = script.head(request, rules: rules)
        #expect(!SessionScript.startsExchange(actions))
        let answer = try #require(SessionScript.answer(in: actions))
        let text = String(decoding: answer.serialise(), as: UTF8.self)
        let reflected = "TRACE http://api.example.com/t?q=1 HTTP/1.1\r\nHost: api.example.com\r\nMax-Forwards: 0\r\n"
            + "X-Seen: yes\r\nVia: 1.1 edge\r\n\r\n"
        #expect(text == "HTTP/1.1 200 OK\r\nProxy-Status: pinproxy\r\nContent-Type: message/http\r\n"
                + "Content-Length: \(reflected.utf8.count)\r\nConnection: close\r\n\r\n" + reflected)
        #expect(!text.contains("secret") && !text.contains("c2VjcmV0"))
        #expect(script.machine.state == .closed)
    }

    @Test("OPTIONS at zero gets an empty 200, in origin-, absolute- and asterisk-form", arguments: [
        "OPTIONS /o HTTP/1.1\r\nHost: api.example.com\r\nMax-Forwards: 0\r\n\r\n",
        "OPTIONS http://api.example.com HTTP/1.1\r\nHost: api.example.com\r\nMax-Forwards: 0\r\n\r\n",
        "OPTIONS * HTTP/1.1\r\nHost: api.example.com\r\nMax-Forwards: 0\r\n\r\n",
    ])
    func options(request: String) throws {
        var script = SessionScript()
        let actions = script.head(request, rules: rules)
        #expect(!SessionScript.startsExchange(actions))
        let answer = try #require(SessionScript.answer(in: actions))
        #expect(String(decoding: answer.serialise(), as: UTF8.self)
                == "HTTP/1.1 200 OK\r\nProxy-Status: pinproxy\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    }

    @Test("above zero the request goes upstream with one less", arguments: [
        ("TRACE /t HTTP/1.1\r\nHost: api.example.com\r\nMax-Forwards: 1\r\n\r\n",
         "TRACE /t HTTP/1.1\r\nHost: api.example.com\r\nMax-Forwards: 0\r\nVia: 1.1 pinproxy\r\n\r\n"),
        ("OPTIONS * HTTP/1.1\r\nHost: api.example.com\r\nMax-Forwards: 70\r\n\r\n",
         "OPTIONS * HTTP/1.1\r\nHost: api.example.com\r\nMax-Forwards: 69\r\nVia: 1.1 pinproxy\r\n\r\n"),
        ("OPTIONS * HTTP/1.1\r\nHost: api.example.com\r\n\r\n",
         "OPTIONS * HTTP/1.1\r\nHost: api.example.com\r\nVia: 1.1 pinproxy\r\n\r\n"),
        ("GET /g HTTP/1.1\r\nHost: api.example.com\r\nMax-Forwards: 0\r\n\r\n",
         "GET /g HTTP/1.1\r\nHost: api.example.com\r\nMax-Forwards: 0\r\nVia: 1.1 pinproxy\r\n\r\n"),
    ])
    func forwarded(request: String, sent: String) throws {
        var script = SessionScript()
        #expect(SessionScript.startsExchange(script.head(request, rules: rules)))
        let ready = script.feed(.upstreamReady(pooled: false, reported: false))
        #expect(ready.first == .sendRequestHead(Array(sent.utf8)))
    }

    @Test("the answer at zero comes before the loop and deny checks: nothing would go there")
    func beforePolicy() throws {
        var script = SessionScript()
        let denyAll = SessionScript.rules(PolicyTable(rules: [], defaultPolicy: .deny))
        let denied = script.head("TRACE http://denied.example/ HTTP/1.1\r\nHost: denied.example\r\nMax-Forwards: 0\r\n\r\n",
                                 rules: denyAll)
        #expect(SessionScript.answer(in: denied)?.status == 200)
        var loop = SessionScript()
        let own = loop.head("OPTIONS http://127.0.0.1:8080/ HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nMax-Forwards: 0\r\n\r\n",
                            rules: rules)
        #expect(SessionScript.answer(in: own)?.status == 200)
    }
}
