import Foundation

/// Instants as ISO 8601 UTC text (`2026-11-29T00:50:31Z`, or with milliseconds
/// `2026-11-29T00:50:31.250Z`), written by hand. Foundation's `ISO8601DateFormatter`
/// builds an ICU date formatter each time one is made, which the REST API did per
/// field: a mesh node's `_peers` answer spent most of its time there (6% of a node's CPU
/// while a chaos run's timeline polled it after a heal).
public enum ISO8601Time {
    /// `date` in UTC, in whole seconds (rounded down) or milliseconds (to the nearest),
    /// as `ISO8601DateFormatter` writes them.
    public static func string(_ date: Date, milliseconds: Bool = false) -> String {
        let time = date.timeIntervalSince1970
        let totalMilliseconds = milliseconds ? Int64((time * 1000).rounded()) : Int64(time.rounded(.down)) * 1000
        let (seconds, millisecond) = floorDivision(totalMilliseconds, 1000)
        let (days, secondOfDay) = floorDivision(seconds, 86_400)
        let (year, month, day) = civilDate(daysSince1970: days)
        var text = ""
        text.reserveCapacity(milliseconds ? 24 : 20)
        append(year, width: 4, to: &text)
        text += "-"
        append(month, width: 2, to: &text)
        text += "-"
        append(day, width: 2, to: &text)
        text += "T"
        append(secondOfDay / 3600, width: 2, to: &text)
        text += ":"
        append(secondOfDay % 3600 / 60, width: 2, to: &text)
        text += ":"
        append(secondOfDay % 60, width: 2, to: &text)
        if milliseconds {
            text += "."
            append(millisecond, width: 3, to: &text)
        }
        text += "Z"
        return text
    }

    /// Quotient and remainder rounded towards minus infinity (instants before 1970).
    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }

    /// The proleptic Gregorian date of a day count from 1970-01-01 (Howard Hinnant's
    /// `civil_from_days`).
    static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func append(_ value: Int64, width: Int, to text: inout String) {
        let digits = String(value)
        if digits.count < width { text += String(repeating: "0", count: width - digits.count) }
        text += digits
    }
}
