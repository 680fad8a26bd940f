internal import COpenSSL

/// A `STACK_OF(X509)` of borrowed certificates: the single owner of the stack
/// (not of its elements), freed with `sk_X509_free` in `deinit`.
///
/// Invariant: `certificates` keeps every element alive for as long as the stack exists.
final class CertificateStack {
    /// The owned stack; never null.
    let pointer: OpaquePointer
    private let certificates: [X509Certificate]

    /// Builds a stack over `certificates`; nil only when OpenSSL cannot allocate.
    init?(_ certificates: [X509Certificate]) {
        guard let stack = shim_sk_X509_new_null() else { return nil }
        pointer = stack
        self.certificates = certificates
        for certificate in certificates where shim_sk_X509_push(stack, certificate.pointer) == 0 {
            return nil
        }
    }

    deinit { shim_sk_X509_free(pointer) }

    /// The elements of a stack OpenSSL owns, each wrapped with its own reference.
    static func certificates(in stack: OpaquePointer?) -> [X509Certificate] {
        guard let stack else { return [] }
        return (0..<max(0, shim_sk_X509_num(stack))).compactMap { index in
            shim_sk_X509_value(stack, index).map { X509Certificate(retaining: $0) }
        }
    }
}
