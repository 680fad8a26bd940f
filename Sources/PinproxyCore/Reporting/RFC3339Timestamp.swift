import Foundation

/// RFC 3339 timestamps in UTC (`2026-11-30T17:43:44.123Z`), formatted by
/// arithmetic rather than `DateFormatter`: deterministic, locale-free, and
/// cheap enough for the violation path.
///
/// Instants are truncated (not rounded) to the shown precision, after
/// snapping to the nearest microsecond so that a binary `Double` such as
/// `…44.1229999` still prints `.123`. Years are clamped to 0001…9999, the
/// range RFC 3339 §5.6 `date-fullyear` can spell.
public enum RFC3339Timestamp {
    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` (the log's `time`).
    public static func milliseconds(_ date: Date) -> String {
        var bytes: [UInt8] = []
        append(date, milliseconds: true, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` (certificate validity in the log).
    public static func seconds(_ date: Date) -> String {
        var bytes: [UInt8] = []
        append(date, milliseconds: false, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z as seconds since 1970.
    private static let earliest: Double = -62_135_596_800
    private static let latest: Double = 253_402_300_799.999

    /// Appends the ASCII timestamp of `date` to `bytes`.
    static func append(_ date: Date, milliseconds: Bool, to bytes: inout [UInt8]) {
        let clamped = min(max(date.timeIntervalSince1970, earliest), latest)
        let micros = Int64((clamped * 1_000_000).rounded())
        let millis = floorDivide(micros, 1000)
        let seconds = floorDivide(millis, 1000)
        let days = floorDivide(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDaysSinceEpoch: days)
        appendDigits(year, width: 4, to: &bytes); bytes.append(UInt8(ascii: "-"))
        appendDigits(month, width: 2, to: &bytes); bytes.append(UInt8(ascii: "-"))
        appendDigits(day, width: 2, to: &bytes); bytes.append(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3600, width: 2, to: &bytes); bytes.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, width: 2, to: &bytes); bytes.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, width: 2, to: &bytes)
        if milliseconds {
            bytes.append(UInt8(ascii: "."))
            appendDigits(millis - seconds * 1000, width: 3, to: &bytes)
        }
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Division rounding towards negative infinity, so instants before 1970 land on the right day.
    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor < 0) ? quotient - 1 : quotient
    }

    /// Proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's
    /// `civil_from_days`, eras of 400 years = 146 097 days).
    private static func civil(fromDaysSinceEpoch days: Int64) -> (Int64, Int64, Int64) {
        let shifted = days + 719_468  // days since 0000-03-01
        let era = floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    /// Zero-padded decimal of a non-negative `value`.
    private static func appendDigits(_ value: Int64, width: Int, to bytes: inout [UInt8]) {
        var digits = [UInt8](repeating: UInt8(ascii: "0"), count: width)
        var rest = value
        var index = width - 1
        while index >= 0 {
            digits[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
            index -= 1
        }
        bytes.append(contentsOf: digits)
    }
}
