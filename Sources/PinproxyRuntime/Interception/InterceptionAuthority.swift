import Foundation
import PinproxyCore

/// One loaded generation of the local interception CA (SPEC §3.1): what the
/// daemon, `check` and `pinproxy ca` read from `interception.ca_dir`.
///
/// Loading checks the files' modes and owners (`CADirectory`), that the
/// issuing certificate is a valid CA certificate issued by the root now,
/// that both carry the same critical name constraints (dNSName subtrees
/// permitted, every IP excluded), that the keys are P-256 and the issuing
/// key is the issuing certificate's. The scope is read back from the
/// issuing certificate's permitted subtrees: the certificate is the truth,
/// there is no other metadata.
///
/// Immutable but for its leaf cache (thread-safe), so one instance is shared
/// by every event loop, with one `TLSServerContext`.
public final class InterceptionAuthority: Sendable {
    /// The directory, absolute.
    public let directory: String
    /// The names the CA may issue for (its permitted dNSName subtrees).
    public let scope: InterceptionScope
    /// The generation's identity: SHA-256 of the root certificate's DER, lower-case hex.
    public let fingerprint: String
    public let rootNotAfter: Date
    public let issuingNotAfter: Date
    /// The root certificate in PEM: what clients trust (`pinproxy ca export`).
    public let rootPEM: String

    let root: X509Certificate
    let issuing: X509Certificate
    let leafIssuer: LeafIssuer
    let serverContext: TLSServerContext
    private let leaves = LeafCache()

    private init(directory: CADirectory, root: X509Certificate, issuing: X509Certificate, issuingKey: PrivateKey,
                 leafKey: PrivateKey, scope: InterceptionScope) throws {
        self.directory = directory.path
        self.root = root
        self.issuing = issuing
        self.scope = scope
        fingerprint = Hex.lowercase(Digest.sha256(root.der))
        rootNotAfter = root.facts.notAfter
        issuingNotAfter = issuing.facts.notAfter
        rootPEM = String(decoding: root.pem, as: UTF8.self)
        leafIssuer = try LeafIssuer(issuing: issuing, issuingKey: issuingKey, leafKey: leafKey)
        serverContext = try TLSServerContext(chain: [issuing], key: leafKey)
    }

    /// The earlier of the two expiries: when clients stop accepting its leaves.
    public var notAfter: Date { min(rootNotAfter, issuingNotAfter) }

    // MARK: loading and creating

    /// Loads the CA in `directory`, valid at `now`. `reusing` a previous
    /// generation with the very same files returns it, so a reload keeps its
    /// leaf cache and its ticket keys (clients resume across the reload).
    /// `configPath` goes into the fix the errors name.
    public static func load(directory path: String, at now: Date = Date(), reusing previous: InterceptionAuthority? = nil,
                            configPath: String? = nil) throws(InterceptionCAError) -> InterceptionAuthority {
        let directory = CADirectory(path)
        guard directory.exists else { throw .missing(directory.path, configPath: configPath) }
        try directory.checkDirectory()
        let rootPath = directory.file(CADirectory.rootCertificate)
        let issuingPath = directory.file(CADirectory.issuingCertificate)
        func unusable(_ path: String, _ problem: String) -> InterceptionCAError {
            .unusable(path, problem, configPath: configPath)
        }
        // Modes and owners of every file first, so a loose key is reported even when another file is bad.
        let rootBytes = try directory.readCertificate(CADirectory.rootCertificate)
        let issuingBytes = try directory.readCertificate(CADirectory.issuingCertificate)
        let issuingKeyBytes = try directory.readKey(CADirectory.issuingKey)
        let leafKeyBytes = try directory.readKey(CADirectory.leafKey)
        let root: X509Certificate, issuing: X509Certificate, issuingKey: PrivateKey, leafKey: PrivateKey
        do {
            root = try single(X509Certificate.parse(rootBytes, source: rootPath), rootPath)
            issuing = try single(X509Certificate.parse(issuingBytes, source: issuingPath), issuingPath)
            issuingKey = try PrivateKey.parse(issuingKeyBytes, source: directory.file(CADirectory.issuingKey))
            leafKey = try PrivateKey.parse(leafKeyBytes, source: directory.file(CADirectory.leafKey))
        } catch let error as FileLoadError {
            throw unusable(error.path, error.problem)
        } catch {
            throw unusable(directory.path, "\(error)")
        }
        if let previous, previous.root.isSame(as: root), previous.issuing.isSame(as: issuing),
           previous.leafIssuer.issuingKey.subjectPublicKeyInfo == issuingKey.subjectPublicKeyInfo,
           previous.leafIssuer.leafKey.subjectPublicKeyInfo == leafKey.subjectPublicKeyInfo,
           previous.notAfter > now {
            return previous
        }
        if let failure = issuing.validationFailure(issuedBy: root, at: now) {
            throw unusable(issuingPath, "is not a valid CA certificate under \(CADirectory.rootCertificate) now: \(failure)")
        }
        guard issuing.pathLengthConstraint == 0 else {
            throw unusable(issuingPath, "must have pathLenConstraint 0: it issues leaves only")
        }
        guard issuingKey.isP256, issuingKey.matches(issuing) else {
            throw unusable(directory.file(CADirectory.issuingKey), "is not the P-256 key of \(CADirectory.issuingCertificate)")
        }
        guard leafKey.isP256 else { throw unusable(directory.file(CADirectory.leafKey), "is not an ECDSA P-256 key") }
        let scope: InterceptionScope
        do {
            scope = try readScope(root: root, issuing: issuing)
        } catch let problem as ScopeProblem {
            throw unusable(problem.onRoot ? rootPath : issuingPath, problem.text)
        } catch {
            throw unusable(issuingPath, "\(error)")
        }
        do {
            return try InterceptionAuthority(directory: directory, root: root, issuing: issuing, issuingKey: issuingKey,
                                             leafKey: leafKey, scope: scope)
        } catch {
            throw unusable(directory.path, "cannot be made ready for TLS: \(error)")
        }
    }

    /// `pinproxy ca init`: issues a new generation for `scope`, writes it into
    /// `directory`, and loads it back (what is on disk is what is served).
    public static func create(in directory: String, for scope: InterceptionScope, at now: Date = Date(),
                              configPath: String? = nil) throws(InterceptionCAError) -> InterceptionAuthority {
        let folder = CADirectory(directory)
        let generation: InterceptionCAIssuer.Generation
        do {
            generation = try InterceptionCAIssuer.issue(for: scope, at: now)
        } catch {
            throw .unusable(folder.path, "cannot issue a CA: \(error)", configPath: configPath)
        }
        try InterceptionCAIssuer.write(generation, to: folder)
        return try load(directory: folder.path, at: now, configPath: configPath)
    }

    private static func single(_ certificates: [X509Certificate], _ path: String) throws -> X509Certificate {
        guard certificates.count == 1 else { throw FileLoadError(path: path, problem: "must hold exactly one certificate") }
        return certificates[0]
    }

    private struct ScopeProblem: Error {
        var onRoot: Bool
        var text: String
    }

    /// The permitted names of the issuing certificate, after checking that it
    /// and the root carry exactly the constraints `InterceptionCAIssuer` writes.
    private static func readScope(root: X509Certificate, issuing: X509Certificate) throws -> InterceptionScope {
        let expectedExclusions: Set<ConstrainedName> = [.ipRange(InterceptionCAIssuer.everyIPv4),
                                                       .ipRange(InterceptionCAIssuer.everyIPv6)]
        func names(of certificate: X509Certificate, onRoot: Bool) throws -> [String] {
            guard let constraints = certificate.nameConstraintSubtrees else {
                throw ScopeProblem(onRoot: onRoot, text: "has no name constraints: it would be a CA for every name")
            }
            guard constraints.isCritical else { throw ScopeProblem(onRoot: onRoot, text: "has name constraints that are not critical") }
            guard !constraints.hasDistanceBounds else {
                throw ScopeProblem(onRoot: onRoot, text: "has a name-constraint subtree with minimum or maximum (RFC 5280 forbids them)")
            }
            guard Set(constraints.excluded) == expectedExclusions, constraints.excluded.count == 2 else {
                throw ScopeProblem(onRoot: onRoot, text: "does not exclude exactly every IPv4 and IPv6 address")
            }
            let dns = constraints.permitted.compactMap { name -> String? in
                if case let .dns(value) = name { return value }
                return nil
            }
            guard !dns.isEmpty, dns.count == constraints.permitted.count,
                  dns.allSatisfy({ HostName($0)?.value == $0 && !(HostName($0)?.isIPAddress ?? true) }) else {
                throw ScopeProblem(onRoot: onRoot, text: "permits something other than DNS names")
            }
            return dns
        }
        let issuingNames = try names(of: issuing, onRoot: false)
        let rootNames = try names(of: root, onRoot: true)
        guard Set(issuingNames) == Set(rootNames) else {
            throw ScopeProblem(onRoot: false, text: "permits other names than \(CADirectory.rootCertificate)")
        }
        return InterceptionScope(names: issuingNames)
    }

    // MARK: leaves and connections

    /// Why no leaf is issued for a host.
    public enum LeafRefusal: Error, Sendable, Hashable, CustomStringConvertible {
        /// The CA excludes every IP range: no certificate for an IP literal.
        case ipLiteral(HostName)
        /// The host is outside the CA's name constraints.
        case outsideScope(HostName)

        public var description: String {
            switch self {
            case let .ipLiteral(host): "\(host) is an IP literal: the interception CA excludes every IP address"
            case let .outsideScope(host): "\(host) is outside the interception CA's names: run `pinproxy ca init`"
            }
        }
    }

    /// The leaf for `host`, from the cache or minted now (one signature).
    func leaf(for host: HostName, now: Date = Date()) throws -> InterceptionLeaf {
        guard !host.isIPAddress else { throw LeafRefusal.ipLiteral(host) }
        guard scope.covers(host) else { throw LeafRefusal.outsideScope(host) }
        return try leaves.leaf(for: host, isFresh: { leafIssuer.isFresh($0, at: now) },
                               mint: { try leafIssuer.mint(for: host, at: now) })
    }

    /// A server connection for an intercepted CONNECT to `host`: the host's
    /// leaf, the shared key and the issuing certificate installed, SNI
    /// required to be `host`; ready for `TLSStream(…, role: .server(prefix:))`.
    /// Throws `LeafRefusal` for a host the CA cannot issue for, or an
    /// `OpenSSLError`.
    func makeConnection(for host: HostName, now: Date = Date()) throws -> TLSConnection {
        try serverContext.makeConnection(presenting: leaf(for: host, now: now).certificate, for: host)
    }

    /// Mints a new leaf for `host` past the cache (which is left alone): the
    /// whole work of a cache miss, for `bench/leaf-mint-cost.sh`.
    public func mintUncachedLeaf(for host: HostName, at now: Date = Date()) throws {
        guard !host.isIPAddress else { throw LeafRefusal.ipLiteral(host) }
        guard scope.covers(host) else { throw LeafRefusal.outsideScope(host) }
        _ = try leafIssuer.mint(for: host, at: now)
    }

    /// Makes the server connection of an intercepted CONNECT to `host` (its
    /// leaf from the cache) and frees it: the per-connection setup before the
    /// handshake, for `bench/leaf-mint-cost.sh`.
    public func makeAndFreeConnection(for host: HostName, at now: Date = Date()) throws {
        _ = try makeConnection(for: host, now: now)
    }

    /// The number of cached leaves.
    var cachedLeafCount: Int { leaves.count }
}
