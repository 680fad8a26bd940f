/// Where the configuration names a file: the member's JSON path and source
/// line, and the file path it gives.
///
/// Why the configuration keeps these: files are read by OpenSSL only when a
/// generation is built (`check`, start, reload), long after the JSON is gone;
/// a garbage PEM must still be reported at the line of the member that names
/// it (`FILE:LINE: $.hosts["x"].anchors[0]: …`), as every other problem is.
public struct FileReference: Sendable, Hashable {
    /// E.g. `$.hosts["api.example.com"].certificates[0]`.
    public var path: String
    /// 1-based line of the value in the configuration file.
    public var line: Int?
    /// The file path as written.
    public var file: String

    public init(path: String, line: Int?, file: String) {
        self.path = path
        self.line = line
        self.file = file
    }
}

extension Configuration {
    /// `SOURCE:LINE: $.path` for the member under `pathPrefix` (a rule's JSON
    /// path) that names `file`; nil when no member does (built-in defaults).
    public func location(ofFile file: String, under pathPrefix: String) -> String? {
        guard let reference = fileReferences.first(where: { $0.file == file && $0.path.hasPrefix(pathPrefix) }) else {
            return nil
        }
        let place = reference.line.map { "\(source):\($0)" } ?? source
        return "\(place): \(reference.path)"
    }
}
