import Foundation

/// The file's bytes as a string ("" when it does not exist).
func contents(of path: String) -> String {
    (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
}
