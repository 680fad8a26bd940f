import Testing
@testable import PinproxyCore

@Suite("Configuration: problems")
struct ConfigurationProblemTests {
    /// One invalid configuration and the single problem it must produce.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var text: String
        var problem: ConfigurationProblem
        var testDescription: String { name }
    }

    static let goodPin = "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    static let otherPin = "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="

    static let cases: [Case] = [
        Case(name: "bad base64 pin", text: """
            { "hosts": { "api.example.com": { "policy": "pin-public-keys",
                "pins": ["\(goodPin)", "sha256/not*base64"] } } }
            """, problem: .init(path: #"$.hosts["api.example.com"].pins[1]"#, line: 2,
                               message: #"pin "sha256/not*base64" is not valid base64 (standard alphabet, with '=' padding, no spaces)"#,
                               hint: "print a host's pins with `pinproxy pins HOST`")),
        Case(name: "31-byte pin", text: """
            { "hosts": { "api.example.com": { "policy": "pin-public-keys",
                "pins": ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==", "\(goodPin)"] } } }
            """, problem: .init(path: #"$.hosts["api.example.com"].pins[0]"#, line: 2,
                               message: #"pin "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==" decodes to 31 bytes; a SHA-256 pin is exactly 32 bytes"#,
                               hint: "print a host's pins with `pinproxy pins HOST`")),
        Case(name: "unknown key in a host entry", text: """
            { "hosts": { "a.com": { "policy": "pin-public-keys", "pins": ["\(goodPin)", "\(otherPin)"],
                "pinz": [] } } }
            """, problem: .init(path: #"$.hosts["a.com"].pinz"#, line: 2,
                               message: #"unknown key $.hosts["a.com"].pinz; did you mean "pins"?"#)),
        Case(name: "unknown top-level key", text: #"{ "listener": [] }"#,
             problem: .init(path: "$.listener", line: 1, message: #"unknown key $.listener; did you mean "listeners"?"#)),
        Case(name: "unknown key without a close match", text: #"{ "frobnicate": 1 }"#,
             problem: .init(path: "$.frobnicate", line: 1, message: "unknown key $.frobnicate",
                            hint: "allowed keys: " + ConfigurationLoader.topLevelKeys.joined(separator: ", "))),
        Case(name: "unknown policy", text: #"{ "hosts": { "a.com": { "policy": "pin-keys" } } }"#,
             problem: .init(path: #"$.hosts["a.com"].policy"#, line: 1, message: #"unknown policy "pin-keys""#,
                            hint: #"use one of "default", "pin-public-keys", "pin-certificates", "anchors", "disable", "custom""#)),
        Case(name: "missing policy", text: #"{ "hosts": { "a.com": { "enforce": false } } }"#,
             problem: .init(path: #"$.hosts["a.com"]"#, line: 1, message: #"no "policy" key"#,
                            hint: #"add "policy": one of "default", "pin-public-keys", "pin-certificates", "anchors", "disable", "custom""#)),
        Case(name: "missing file", text: #"{ "hosts": { "a.com": { "policy": "anchors", "anchors": ["@nope.pem"] } } }"#,
             problem: .init(path: #"$.hosts["a.com"].anchors[0]"#, line: 1, message: #"anchor file "@nope.pem" does not exist"#,
                            hint: "check the path; relative paths are resolved from the working directory")),
        Case(name: "missing CRL file", text: #"{ "hosts": { "a.com": { "policy": "default", "crl_files": ["@nope.crl"] } } }"#,
             problem: .init(path: #"$.hosts["a.com"].crl_files[0]"#, line: 1, message: #"CRL file "@nope.crl" does not exist"#,
                            hint: "check the path; relative paths are resolved from the working directory")),
        Case(name: "unknown ocsp_stapling mode", text: #"{ "hosts": { "a.com": { "policy": "default", "ocsp_stapling": "requre" } } }"#,
             problem: .init(path: #"$.hosts["a.com"].ocsp_stapling"#, line: 1, message: #"unknown ocsp_stapling mode "requre""#,
                            hint: #"use one of "check", "require", "off""#)),
        Case(name: "key not applicable to the policy", text: """
            { "hosts": { "a.com": { "policy": "default",
                 "pins": ["\(goodPin)"] } } }
            """, problem: .init(path: #"$.hosts["a.com"].pins"#, line: 2, message: #""pins" does not apply to policy "default""#,
                               hint: #"it applies to "pin-public-keys"; remove it or change the policy"#)),
        Case(name: "validate_chain on anchors", text: """
            { "hosts": { "a.com": { "policy": "anchors", "anchors": ["@corp-root.pem"], "validate_chain": false } } }
            """, problem: .init(path: #"$.hosts["a.com"].validate_chain"#, line: 1,
                               message: #""validate_chain" does not apply to policy "anchors""#,
                               hint: #"it applies to "pin-public-keys", "pin-certificates", "custom"; remove it or change the policy"#)),
        Case(name: "non-loopback listener", text: #"{ "listeners": [{ "listen": "0.0.0.0:8080" }] }"#,
             problem: .init(path: "$.listeners[0].listen", line: 1,
                            message: #"listen address "0.0.0.0:8080" is not loopback: pinproxy would be an open relay"#,
                            hint: #"listen on 127.0.0.1 or [::1], or add "allow_remote": true if you firewall it"#)),
        Case(name: "listener on a host name", text: #"{ "listeners": [{ "listen": "example.com:8080" }] }"#,
             problem: .init(path: "$.listeners[0].listen", line: 1,
                            message: #"listen address "example.com:8080" must be an IP address or localhost"#,
                            hint: #"write e.g. "127.0.0.1:8080" or "[::1]:8080""#)),
        Case(name: "duplicate listen address", text: """
            { "listeners": [{ "listen": "127.0.0.1:8080" },
                            { "listen": "127.0.0.1:8080" }] }
            """, problem: .init(path: "$.listeners[1].listen", line: 2,
                               message: #"listen address "127.0.0.1:8080" is already used by $.listeners[0]"#)),
        Case(name: "bad duration", text: #"{ "timeouts": { "connect": "5 seconds" } }"#,
             problem: .init(path: "$.timeouts.connect", line: 1, message: #""5 seconds" is not a positive duration"#,
                            hint: #"write e.g. "250ms", "5s", "2m" or "1h""#)),
        Case(name: "bare-number duration", text: #"{ "timeouts": { "idle": 60 } }"#,
             problem: .init(path: "$.timeouts.idle", line: 1, message: "bare number 60 has no unit",
                            hint: #"write a string with a unit, e.g. "60s" or "60ms""#)),
        Case(name: "zero duration", text: #"{ "timeouts": { "shutdown": "0s" } }"#,
             problem: .init(path: "$.timeouts.shutdown", line: 1, message: #""0s" is not a positive duration"#,
                            hint: #"write e.g. "250ms", "5s", "2m" or "1h""#)),
        Case(name: "gateway without upstream", text: #"{ "listeners": [{ "listen": "127.0.0.1:9001", "mode": "gateway" }] }"#,
             problem: .init(path: "$.listeners[0]", line: 1, message: #"gateway listener has no "upstream""#,
                            hint: #"add "upstream": "api.example.com:443""#)),
        Case(name: "upstream on a forward listener", text: #"{ "listeners": [{ "listen": "127.0.0.1:9001", "upstream": "a.com" }] }"#,
             problem: .init(path: "$.listeners[0].upstream", line: 1, message: #""upstream" applies only to a gateway listener"#,
                            hint: #"add "mode": "gateway", or remove "upstream""#)),
        Case(name: "include_subdomains on default_policy", text: #"{ "default_policy": { "policy": "default", "include_subdomains": true } }"#,
             problem: .init(path: "$.default_policy.include_subdomains", line: 1,
                            message: #""include_subdomains" does not apply to default_policy (it covers every unlisted host)"#)),
        Case(name: "client certificate without key", text: #"{ "hosts": { "a.com": { "policy": "default", "client_certificate": "@client.pem" } } }"#,
             problem: .init(path: #"$.hosts["a.com"]"#, line: 1,
                            message: #""client_certificate" and "client_key" go together; "client_key" is missing"#,
                            hint: #"add "client_key", or remove the other"#)),
        Case(name: "pin-public-keys without pins", text: #"{ "hosts": { "a.com": { "policy": "pin-public-keys", "pins": [] } } }"#,
             problem: .init(path: #"$.hosts["a.com"]"#, line: 1,
                            message: #"policy "pin-public-keys" needs at least one of "pins" or "public_keys""#,
                            hint: #"add "pins": ["sha256/…", "sha256/…"] (see `pinproxy pins HOST`)"#)),
        Case(name: "threads out of range", text: #"{ "threads": 1000 }"#,
             problem: .init(path: "$.threads", line: 1, message: "1000 is out of range 0…256")),
        Case(name: "max_header_bytes too small", text: #"{ "limits": { "max_header_bytes": 10 } }"#,
             problem: .init(path: "$.limits.max_header_bytes", line: 1, message: "10 is out of range 1024…1048576")),
        Case(name: "resolve target is a name", text: #"{ "resolve": { "a.com:443": "b.com:443" } }"#,
             problem: .init(path: #"$.resolve["a.com:443"]"#, line: 1, message: #"resolve target "b.com:443" is not an IP address"#,
                            hint: #"write "127.0.0.1:9443" or "[::1]:9443""#)),
        Case(name: "invalid host key", text: #"{ "hosts": { "a.*.com": { "policy": "default" } } }"#,
             problem: .init(path: #"$.hosts["a.*.com"]"#, line: 1,
                            message: #""a.*.com" is not a host name, IP address or wildcard pattern"#,
                            hint: "write api.example.com, *.example.com, **.example.com or 192.0.2.1 (A-labels for IDNs)")),
        Case(name: "two spellings of one host", text: """
            { "hosts": { "Example.com": { "policy": "default" },
                         "example.com.": { "policy": "default" } } }
            """, problem: .init(path: #"$.hosts["example.com."]"#, line: 2,
                               message: #""example.com." is the same host pattern as "Example.com""#, hint: "keep one entry")),
        Case(name: "** next to include_subdomains", text: """
            { "hosts": { "**.example.com": { "policy": "default" },
                         "example.com": { "policy": "default", "include_subdomains": true } } }
            """, problem: .init(path: #"$.hosts["example.com"]"#, line: 2,
                               message: #""example.com" covers the same names as "**.example.com""#, hint: "keep one of them")),
        Case(name: "include_subdomains on a wildcard", text: #"{ "hosts": { "*.a.com": { "policy": "default", "include_subdomains": true } } }"#,
             problem: .init(path: #"$.hosts["*.a.com"].include_subdomains"#, line: 1,
                            message: #""include_subdomains" has no meaning on "*.a.com""#,
                            hint: "use **.a.com to cover a name and all below it")),
        Case(name: "unsupported TLS version", text: #"{ "hosts": { "a.com": { "policy": "default", "min_tls_version": "1.1" } } }"#,
             problem: .init(path: #"$.hosts["a.com"].min_tls_version"#, line: 1, message: #"unknown TLS version "1.1""#,
                            hint: #"use "1.2" or "1.3""#)),
        Case(name: "impossible expiry date", text: #"{ "hosts": { "a.com": { "policy": "default", "expires": "2027-02-30" } } }"#,
             problem: .init(path: #"$.hosts["a.com"].expires"#, line: 1, message: #""2027-02-30" is not a date"#,
                            hint: #"write YYYY-MM-DD, e.g. "2027-06-30""#)),
        Case(name: "wrong type", text: #"{ "hosts": { "a.com": { "policy": "default", "enforce": "yes" } } }"#,
             problem: .init(path: #"$.hosts["a.com"].enforce"#, line: 1, message: "expected true or false, found a string")),
        Case(name: "unknown default_policy string", text: #"{ "default_policy": "pin-public-keys" }"#,
             problem: .init(path: "$.default_policy", line: 1, message: #"unknown default_policy "pin-public-keys""#,
                            hint: #"use "default", "deny" (403 for every unlisted host), or a policy object such as { "policy": "pin-public-keys", … }"#)),
        Case(name: "syntax error", text: "{\n  \"threads\": 1,\n  \"log_burst\" 2\n}",
             problem: .init(path: "$", line: 3, message: #"column 15: expected ':' after key "log_burst" near ""log_burst" 2""#,
                            hint: "JSON with // or /* */ comments and trailing commas is accepted")),
    ]

    @Test("each class of error is reported once, at its exact JSON path", arguments: cases)
    func singleProblem(_ testCase: Case) throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        var expected = testCase.problem
        expected.message = fixture.resolve(expected.message)
        #expect(fixture.problems(testCase.text) == [expected])
    }

    @Test("all problems are collected in one run and printed FILE:LINE: path: message (hint)")
    func severalProblems() throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let text = """
        {
          "listeners": [{ "listen": "10.0.0.1:80", "mode": "gateway" }],
          "hosts": {
            "a.com": { "policy": "pin-public-keys", "pins": ["sha256/AAAA"], "validate_hots": true },
          },
          "timeouts": { "idle": 60 },
        }
        """
        let error = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.parse(text: text, source: "/etc/pinproxy/pinproxy.json", environment: [:], cpuCount: 1)
        }
        #expect(error?.problems.map(\.path) == [
            "$.listeners[0].listen", "$.listeners[0]",
            #"$.hosts["a.com"].validate_hots"#, #"$.hosts["a.com"].pins[0]"#,
            "$.timeouts.idle",
        ])
        #expect(error?.description == """
        /etc/pinproxy/pinproxy.json:2: $.listeners[0].listen: listen address "10.0.0.1:80" is not loopback: pinproxy would be an open relay (listen on 127.0.0.1 or [::1], or add "allow_remote": true if you firewall it)
        /etc/pinproxy/pinproxy.json:2: $.listeners[0]: gateway listener has no "upstream" (add "upstream": "api.example.com:443")
        /etc/pinproxy/pinproxy.json:4: $.hosts["a.com"].validate_hots: unknown key $.hosts["a.com"].validate_hots; did you mean "validate_host"?
        /etc/pinproxy/pinproxy.json:4: $.hosts["a.com"].pins[0]: pin "sha256/AAAA" decodes to 3 bytes; a SHA-256 pin is exactly 32 bytes (print a host's pins with `pinproxy pins HOST`)
        /etc/pinproxy/pinproxy.json:6: $.timeouts.idle: bare number 60 has no unit (write a string with a unit, e.g. "60s" or "60ms")
        """)
    }
}

extension ConfigurationProblemTests {
    @Test("client credential files are checked at their own path")
    func clientCredentialPaths() throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        #expect(fixture.problems(#"{ "hosts": { "a.com": { "policy": "default", "client_certificate": 1, "client_key": "@gone.key" } } }"#) == [
            ConfigurationProblem(path: #"$.hosts["a.com"].client_certificate"#, line: 1,
                                 message: "expected a string, found a number"),
            ConfigurationProblem(path: #"$.hosts["a.com"].client_key"#, line: 1,
                                 message: "client key file \"\(fixture.path("gone.key"))\" does not exist",
                                 hint: "check the path; relative paths are resolved from the working directory"),
        ])
    }
}
