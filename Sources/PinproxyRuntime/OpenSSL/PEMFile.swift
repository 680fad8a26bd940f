import Foundation
internal import COpenSSL

/// The contents of a key or certificate file, split into PEM blocks or kept as one DER blob.
///
/// Config files may hold PEM (one or many blocks, any label) or raw DER; this is
/// the one place that tells them apart, so every loader reports errors alike.
/// Invariant: `blocks` is non-empty for a PEM file; `der` is set only for a file
/// without any `-----BEGIN` marker.
struct PEMFile {
    /// One PEM block: its label (`CERTIFICATE`, `PUBLIC KEY`, …) and decoded bytes.
    struct Block {
        let label: String
        let der: [UInt8]
    }

    let path: String
    let blocks: [Block]
    /// The whole file when it is not PEM (assumed DER).
    let der: [UInt8]?

    /// Reads `path`; throws a `FileLoadError` naming it when it cannot be read or a PEM block is malformed.
    init(contentsOf path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FileLoadError(path: path, problem: "cannot be read (missing or no permission)")
        }
        try self.init(bytes: [UInt8](data), path: path)
    }

    /// Splits in-memory file contents; `path` names the source in errors.
    init(bytes: [UInt8], path: String) throws {
        self.path = path
        guard Data(bytes).range(of: Data("-----BEGIN".utf8)) != nil else {
            guard !bytes.isEmpty else { throw FileLoadError(path: path, problem: "is empty") }
            blocks = []
            der = bytes
            return
        }
        der = nil
        blocks = try PEMFile.readBlocks(bytes, path: path)
    }

    private static func readBlocks(_ bytes: [UInt8], path: String) throws -> [Block] {
        // The BIO borrows `bytes`: it is freed before the array goes out of scope.
        let blocks: [Block]? = bytes.withUnsafeBytes { raw -> [Block]? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            var found: [Block] = []
            while true {
                var name: UnsafeMutablePointer<CChar>?
                var header: UnsafeMutablePointer<CChar>?
                var data: UnsafeMutablePointer<UInt8>?
                var length = 0
                ERR_clear_error()
                // PEM_read_bio allocates name/header/data; we free all three with OPENSSL_free.
                guard PEM_read_bio(bio, &name, &header, &data, &length) == 1 else { break }
                defer { shim_OPENSSL_free(name); shim_OPENSSL_free(header); shim_OPENSSL_free(data) }
                let label = name.map { String(cString: $0) } ?? ""
                let der = data.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
                found.append(Block(label: label, der: der))
            }
            // The loop ends on "no start line" at end of input; anything else is a malformed block.
            let code = ERR_peek_last_error()
            ERR_clear_error()
            if ERR_GET_REASON(code) != PEM_R_NO_START_LINE && code != 0 { return nil }
            return found
        }
        guard let blocks, !blocks.isEmpty else {
            throw FileLoadError(path: path, problem: "holds a malformed PEM block")
        }
        return blocks
    }
}

/// A key or certificate file that could not be used; says which file and what is wrong.
struct FileLoadError: Error, CustomStringConvertible {
    let path: String
    let problem: String
    var description: String { "\(path): \(problem)" }
}
