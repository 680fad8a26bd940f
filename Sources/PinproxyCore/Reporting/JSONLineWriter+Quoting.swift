extension JSONLineWriter {
    /// `text` as one JSON string literal, escaped as the violation log
    /// escapes it: for the files and fragments pinproxy writes for people to
    /// read and edit (the learned pins, the `hosts` section it prints).
    static func quoted(_ text: String) -> String {
        var writer = JSONLineWriter(capacity: text.utf8.count + 2)
        writer.string(text)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
