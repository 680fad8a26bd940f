import Foundation
internal import COpenSSL

/// One certificate revocation list: the single owner of an `X509_CRL*`, freed in `deinit`.
final class RevocationList: @unchecked Sendable {
    /// The owned `X509_CRL*`; never null.
    let pointer: OpaquePointer

    init(takingOwnership pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { X509_CRL_free(pointer) }

    var der: [UInt8] { X509Certificate.encode { i2d_X509_CRL(pointer, $0) } }

    /// Every CRL of a `crl_files` entry: PEM (`X509 CRL` blocks) or one DER CRL.
    static func load(contentsOf path: String) throws -> [RevocationList] {
        let file = try PEMFile(contentsOf: path)
        var lists: [RevocationList] = []
        if let der = file.der {
            guard let list = RevocationList(der: der) else {
                throw FileLoadError(path: path, problem: "is neither PEM nor a DER CRL")
            }
            lists = [list]
        }
        for (index, block) in file.blocks.enumerated() where block.label == "X509 CRL" {
            guard let list = RevocationList(der: block.der) else {
                throw FileLoadError(path: path, problem: "PEM block \(index + 1) is not a valid CRL")
            }
            lists.append(list)
        }
        guard !lists.isEmpty else { throw FileLoadError(path: path, problem: "holds no X509 CRL block") }
        for list in lists where !list.hasNumber {
            throw FileLoadError(path: path, problem: "the CRL of \(list.issuer) has no CRL number; RFC 5280 §5.2.3 "
                                + "requires one of every conforming CRL issuer, so this file is not a CRL pinproxy trusts")
        }
        return lists
    }

    /// The cRLNumber extension is present (OpenSSL does not require it).
    var hasNumber: Bool { X509_CRL_get_ext_by_NID(pointer, NID_crl_number, -1) >= 0 }

    convenience init?(der: [UInt8]) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509_CRL(nil, &cursor, buffer.count)
        }
        guard let parsed else { return nil }
        self.init(takingOwnership: parsed)
    }

    /// The issuer, RFC 2253-style, for messages.
    var issuer: String { X509Certificate.rfc2253(X509_CRL_get_issuer(pointer)) }

    /// `nextUpdate`, or nil when the CRL has none.
    var nextUpdate: Date? {
        X509_CRL_get0_nextUpdate(pointer).map { X509Certificate.date($0) }
    }
}

/// The CRLs of one policy as the `STACK_OF(X509_CRL)` that
/// `X509_STORE_CTX_set0_crls` points every validation at: the single owner of
/// the stack (not of its elements, which `lists` keeps alive). Immutable, so
/// the handshakes of every loop may read it at once.
final class RevocationListStack: @unchecked Sendable {
    let pointer: OpaquePointer
    let lists: [RevocationList]

    init?(_ lists: [RevocationList]) {
        guard !lists.isEmpty, let stack = shim_sk_X509_CRL_new_null() else { return nil }
        pointer = stack
        self.lists = lists
        for list in lists where shim_sk_X509_CRL_push(stack, list.pointer) == 0 {
            return nil
        }
    }

    deinit { shim_sk_X509_CRL_free(pointer) }
}
