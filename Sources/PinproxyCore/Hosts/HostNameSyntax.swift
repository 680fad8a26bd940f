import Foundation

/// Syntax checks and normalisation for host names and IP literals.
///
/// Deliberately strict: only LDH labels (letters, digits, hyphen; no leading or
/// trailing hyphen), so that a key in the config and a name on the wire can be
/// compared byte for byte after lower-casing. Internationalised names must be
/// written as A-labels (`xn--…`).
enum HostNameSyntax {
    static func normalise(_ raw: String) -> String? {
        // Nearly every host on the wire is already normal: lower case, no
        // brackets, colon or trailing dot. Then normalising changes nothing and
        // only validity is left to check, without copying or lower-casing.
        if isAlreadyNormal(raw) {
            return isIPv4(raw) || isDNSName(raw) ? raw : nil
        }
        var text = raw
        if text.hasPrefix("["), text.hasSuffix("]") {
            text = String(text.dropFirst().dropLast())
            return isIPv6(text) ? text.lowercased() : nil
        }
        if isIPv6(text) { return text.lowercased() }
        if text.hasSuffix(".") { text.removeLast() }
        text = text.lowercased()
        if isIPv4(text) { return text }
        return isDNSName(text) ? text : nil
    }

    private static func isUpperASCII(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") }

    /// No upper case, colon, bracket or trailing dot: normalising would change nothing.
    /// Over the contiguous bytes of a native string (iterating a `UTF8View`
    /// costs some 30 instructions a byte, and this runs for every request's host).
    private static func isAlreadyNormal(_ raw: String) -> Bool {
        func judge(_ bytes: some Collection<UInt8>) -> Bool {
            bytes.allSatisfy { !isUpperASCII($0) && $0 != UInt8(ascii: ":") && $0 != UInt8(ascii: "[") }
        }
        if let result = raw.utf8.withContiguousStorageIfAvailable({ judge($0) && $0.last != UInt8(ascii: ".") }) {
            return result
        }
        return judge(raw.utf8) && raw.utf8.last != UInt8(ascii: ".")
    }

    /// Whether `text` holds `byte`, over its contiguous bytes when it has them (see `isAlreadyNormal`).
    private static func contains(_ text: String, _ byte: UInt8) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { $0.contains(byte) } ?? text.utf8.contains(byte)
    }

    static func isDNSName(_ text: String) -> Bool {
        let bytes = text.utf8
        guard !bytes.isEmpty, bytes.count <= 253 else { return false }
        var labelLength = 0
        var previous: UInt8 = UInt8(ascii: ".")
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "."):
                if labelLength == 0 || previous == UInt8(ascii: "-") { return false }
                labelLength = 0
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                labelLength += 1
            case UInt8(ascii: "-"):
                if labelLength == 0 { return false }
                labelLength += 1
            case UInt8(ascii: "_"):
                // Seen in real service names (_dmarc, SRV-style hosts); harmless for matching.
                labelLength += 1
            default:
                return false
            }
            if labelLength > 63 { return false }
            previous = byte
        }
        return labelLength > 0 && previous != UInt8(ascii: "-")
    }

    /// Dotted-quad IPv4, each part 0–255 without leading zeros (`010.0.0.1`
    /// is ambiguous between octal and decimal in other stacks, so refused).
    static func isIPv4(_ text: String) -> Bool {
        // One pass over the bytes (this runs for every request's host).
        var dots = 0
        var digits = 0
        var value = 0
        var leadingZero = false
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") {
                guard digits > 0, dots < 3 else { return false }
                dots += 1
                digits = 0
                value = 0
            } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                if digits == 0 {
                    leadingZero = byte == UInt8(ascii: "0")
                } else if leadingZero {
                    return false
                }
                digits += 1
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                guard digits <= 3, value <= 255 else { return false }
            } else {
                return false
            }
        }
        return dots == 3 && digits > 0
    }

    /// IPv6 literal (RFC 4291 text forms, optional embedded IPv4, no zone id).
    static func isIPv6(_ text: String) -> Bool {
        // Byte scans, not Foundation's String.contains: this runs for every request's host.
        guard contains(text, UInt8(ascii: ":")), text.utf8.count <= 45 else { return false }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return false }
        func groups(_ part: String) -> [Substring]? {
            if part.isEmpty { return [] }
            return part.split(separator: ":", omittingEmptySubsequences: false)
        }
        guard let head = groups(halves[0]) else { return false }
        let tail = halves.count == 2 ? (groups(halves[1]) ?? []) : []
        var all = head + tail
        var width = 0
        if let last = all.last, last.utf8.contains(UInt8(ascii: ".")) {
            guard isIPv4(String(last)) else { return false }
            all.removeLast()
            width += 2
        }
        for group in all {
            guard (1...4).contains(group.count), group.allSatisfy({ $0.isHexDigit }) else { return false }
        }
        width += all.count
        return halves.count == 2 ? width <= 7 : width == 8
    }
}
