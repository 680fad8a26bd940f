internal import COpenSSL
import Foundation

/// A digest of what a trust store trusts, so that two configuration
/// generations can tell whether a connection one of them verified would be
/// verified alike by the other (a reload keeps such connections pooled).
extension TrustStore {
    /// SHA-256 over the certificates and CRLs the store holds (DER, sorted,
    /// each length-prefixed), then, for `directories` (the hashed directories
    /// OpenSSL's default paths look certificates up in when verifying), the
    /// path and contents of each regular file OpenSSL may read there
    /// (`isLookupName`). A directory that does not exist
    /// trusts nothing, as OpenSSL's lookup finds nothing there (a minimal
    /// container without CA certificates); nil when one exists and cannot be
    /// read: then nothing is known to be alike.
    ///
    /// Taken from the loaded store, not from its file, so the digest is of
    /// exactly what this generation trusts. The directories are read when the
    /// store is built; OpenSSL reads them again at each verification, so a
    /// change between two builds makes the digests differ, which is the
    /// direction that matters (nothing is carried over).
    func contentDigest(directories: [String]) -> [UInt8]? {
        var items: [[UInt8]] = []
        if let stack = X509_STORE_get0_objects(pointer) {
            for index in 0..<max(0, OPENSSL_sk_num(stack)) {
                guard let raw = OPENSSL_sk_value(stack, index) else { continue }
                let object = OpaquePointer(raw)
                switch X509_OBJECT_get_type(object) {
                case X509_LU_X509:
                    if let certificate = X509_OBJECT_get0_X509(object) {
                        items.append([0x01] + X509Certificate.encode { i2d_X509(certificate, $0) })
                    }
                case X509_LU_CRL:
                    if let list = X509_OBJECT_get0_X509_CRL(object) {
                        items.append([0x02] + X509Certificate.encode { i2d_X509_CRL(list, $0) })
                    }
                default:
                    continue
                }
            }
        }
        items.sort { $0.lexicographicallyPrecedes($1) }
        for directory in directories {
            var directoryStatus = stat()
            if stat(directory, &directoryStatus) != 0 && errno == ENOENT { continue }
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return nil }
            for name in names.sorted() where Self.isLookupName(name) {
                let path = directory + "/" + name
                var status = stat()
                // Following links (the hashed names are links); what is not a regular file holds no certificate.
                guard stat(path, &status) == 0 else { continue }
                guard (status.st_mode & S_IFMT) == S_IFREG else { continue }
                guard let contents = FileManager.default.contents(atPath: path) else { return nil }
                items.append([0x03] + Array(path.utf8) + [0] + Array(contents))
            }
        }
        let digest = Digest.sha256(lengthPrefixed: items)
        return digest.isEmpty ? nil : digest
    }

    /// Whether OpenSSL's hashed-directory lookup can open a file of this name:
    /// the subject's hash in eight lower-case hex digits, a dot, then a
    /// sequence number (certificates) or `r` and one (CRLs), as `by_dir.c`
    /// formats them (`%08lx.%d`, `%08lx.r%d`). Everything else in the
    /// directory (Debian's `/etc/ssl/certs` also holds the named `.pem` links
    /// and the whole `ca-certificates.crt` bundle) is never read when
    /// verifying, so it neither trusts anything nor changes the digest.
    static func isLookupName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count >= 10, bytes[8] == UInt8(ascii: ".") else { return false }
        let isLowerHex: (UInt8) -> Bool = { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        guard bytes[..<8].allSatisfy(isLowerHex) else { return false }
        var sequence = bytes[9...]
        if sequence.first == UInt8(ascii: "r") { sequence = sequence.dropFirst() }
        return !sequence.isEmpty && sequence.allSatisfy { (0x30...0x39).contains($0) }
    }

    /// The directories OpenSSL's default paths look certificates up in:
    /// `SSL_CERT_DIR` when set (a colon-separated list), else the built-in one.
    static var defaultCertificateDirectories: [String] {
        let variable = String(cString: X509_get_default_cert_dir_env())
        let value = ProcessInfo.processInfo.environment[variable] ?? String(cString: X509_get_default_cert_dir())
        return value.split(separator: ":").map(String.init).filter { !$0.isEmpty }
    }
}
