import Foundation
@testable import PinproxyRuntime

/// Independent X.509 path validators run as child processes on PEM files:
/// OpenSSL's `openssl verify`, Go's `crypto/x509` and Java's PKIX
/// `CertPathValidator`. Each answers whether `leaf` (for `host`) chains
/// through `intermediate` to the trust anchor `root`, and in its own words why not.
enum ChainVerifiers {
    struct Verdict {
        var accepted: Bool
        var output: String
    }

    static func openSSL(root: String, intermediate: String, leaf: String, host: String) throws -> Verdict {
        let isIP = host.allSatisfy { $0.isNumber || $0 == "." } || host.contains(":")
        let result = try ChildProcess.run("/usr/bin/openssl", ["verify", "-x509_strict", "-purpose", "sslserver",
                                                              isIP ? "-verify_ip" : "-verify_hostname", host,
                                                              "-CAfile", root, "-untrusted", intermediate, leaf])
        return Verdict(accepted: result.status == 0 && result.output.contains("\(leaf): OK"), output: result.combinedOutput)
    }

    // MARK: Go

    /// Where `go` is, when Debian's golang-go (or any Go) is installed.
    static let goTool = ToolPaths.executable(named: "go")

    /// A Go program verifying with `x509.Certificate.Verify`: root in the pool, the intermediate as untrusted.
    static let goSource = """
    package main

    import (
    \t"crypto/x509"
    \t"encoding/pem"
    \t"fmt"
    \t"os"
    )

    func load(path string) *x509.Certificate {
    \tdata, err := os.ReadFile(path)
    \tif err != nil { fmt.Println("read:", err); os.Exit(2) }
    \tblock, _ := pem.Decode(data)
    \tif block == nil { fmt.Println("no PEM in", path); os.Exit(2) }
    \tcert, err := x509.ParseCertificate(block.Bytes)
    \tif err != nil { fmt.Println("parse:", err); os.Exit(2) }
    \treturn cert
    }

    func main() {
    \troots, intermediates := x509.NewCertPool(), x509.NewCertPool()
    \troots.AddCert(load(os.Args[1]))
    \tintermediates.AddCert(load(os.Args[2]))
    \t_, err := load(os.Args[3]).Verify(x509.VerifyOptions{DNSName: os.Args[4], Roots: roots,
    \t\tIntermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
    \tif err != nil { fmt.Println("REJECTED:", err); os.Exit(1) }
    \tfmt.Println("OK")
    }
    """

    /// The Go helper, built once per test run into a temporary directory
    /// (a first Go build takes a while; GOCACHE stays in the temp dir for later runs).
    private static let goBinary = Locked<Result<String, TestFailure>?>(nil)

    static func goVerifierBinary() throws -> String {
        try goBinary.withLock { cached in
            if let cached { return try cached.get() }
            let result: Result<String, TestFailure>
            do { result = .success(try buildGoVerifier()) } catch { result = .failure(error as? TestFailure ?? TestFailure("\(error)")) }
            cached = result
            return try result.get()
        }
    }

    private static func buildGoVerifier() throws(TestFailure) -> String {
        guard let go = goTool else { throw TestFailure("go is not installed") }
        let folder = NSTemporaryDirectory() + "pinproxy-go-verify-\(getpid())"
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try goSource.write(toFile: folder + "/verify.go", atomically: true, encoding: .utf8)
            let environment = ["GOCACHE": NSTemporaryDirectory() + "pinproxy-go-cache",
                               "GOPATH": NSTemporaryDirectory() + "pinproxy-go-path", "GO111MODULE": "off", "GOFLAGS": ""]
            let result = try ChildProcess.run(go, ["build", "-o", folder + "/verify", folder + "/verify.go"],
                                              options: .init(environment: environment), timeout: 600)
            guard result.status == 0 else { throw TestFailure("go build failed:\n\(result.combinedOutput)") }
        } catch let error as TestFailure {
            throw error
        } catch {
            throw TestFailure("go build: \(error)")
        }
        return folder + "/verify"
    }

    static func go(root: String, intermediate: String, leaf: String, host: String) throws -> Verdict {
        let result = try ChildProcess.run(try goVerifierBinary(), [root, intermediate, leaf, host], timeout: 120)
        guard result.status == 0 || result.status == 1 else { throw TestFailure("Go verifier: \(result.combinedOutput)") }
        return Verdict(accepted: result.status == 0 && result.output == "OK\n", output: result.combinedOutput)
    }

    // MARK: Java

    /// Where `java` is (Debian's default-jre-headless runs single-file source programs).
    static let javaTool = ToolPaths.executable(named: "java")

    static let javaSource = """
    import java.io.FileInputStream;
    import java.security.cert.*;
    import java.util.List;
    import java.util.Set;

    public class Verify {
        static X509Certificate load(CertificateFactory factory, String path) throws Exception {
            try (FileInputStream in = new FileInputStream(path)) { return (X509Certificate) factory.generateCertificate(in); }
        }

        public static void main(String[] args) throws Exception {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            X509Certificate root = load(factory, args[0]);
            CertPath path = factory.generateCertPath(List.of(load(factory, args[2]), load(factory, args[1])));
            // The root as a trust anchor, the way Java's default trust managers make one (no constraints passed).
            PKIXParameters parameters = new PKIXParameters(Set.of(new TrustAnchor(root, null)));
            parameters.setRevocationEnabled(false);
            try {
                CertPathValidator.getInstance("PKIX").validate(path, parameters);
                System.out.println("OK");
            } catch (CertPathValidatorException e) {
                System.out.println("REJECTED: " + e.getMessage() + " (certificate " + e.getIndex() + ")");
                System.exit(1);
            }
        }
    }
    """

    private static let javaFile = Locked<String?>(nil)

    static func java(root: String, intermediate: String, leaf: String) throws -> Verdict {
        guard let javaTool else { throw TestFailure("java is not installed") }
        let source = try javaFile.withLock { file in
            if let file { return file }
            let folder = NSTemporaryDirectory() + "pinproxy-java-verify-\(getpid())"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try javaSource.write(toFile: folder + "/Verify.java", atomically: true, encoding: .utf8)
            file = folder + "/Verify.java"
            return folder + "/Verify.java"
        }
        // A single-file source program is compiled at each launch: slow on a busy machine.
        let result = try ChildProcess.run(javaTool, [source, root, intermediate, leaf], timeout: 120)
        guard result.status == 0 || result.status == 1 else { throw TestFailure("Java verifier: \(result.combinedOutput)") }
        return Verdict(accepted: result.status == 0 && result.output == "OK\n", output: result.combinedOutput)
    }
}
