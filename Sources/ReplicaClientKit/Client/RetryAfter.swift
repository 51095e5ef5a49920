import Foundation
import ReplicaCore

/// Reads a `Retry-After` header (RFC 9110 §10.2.3) as a wait from now, in either form:
/// delta-seconds (`120`, also a decimal like `1.5`) or an HTTP-date (IMF-fixdate
/// `Sun, 06 Nov 1994 08:49:37 GMT`, and the obsolete RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`
/// and asctime `Sun Nov  6 08:49:37 1994` forms).
///
/// Hostile values never trap: a negative wait or a past date is no wait, a huge or infinite one
/// is clamped to the caller's maximum, and anything else (`nan`, `0x10`, `abc`, empty) is
/// unparseable so the caller falls back to its own backoff.
///
/// ```swift
/// RetryAfter.delay(" 1.5 ", maximum: .seconds(120))   // .milliseconds(1500)
/// RetryAfter.delay("1e20", maximum: .seconds(120))    // .seconds(120)
/// RetryAfter.delay("soon", maximum: .seconds(120))    // nil
/// ```
enum RetryAfter {
    /// The wait a `Retry-After` value asks for, as a duration in `0...maximum`.
    ///
    /// ```swift
    /// let wait = RetryAfter.delay("Sun, 06 Nov 1994 08:49:37 GMT", maximum: .seconds(60))  // .zero: in the past
    /// ```
    /// - Parameters:
    ///   - value: the header's value, surrounding whitespace allowed.
    ///   - now: the moment an HTTP-date is measured from.
    ///   - maximum: the longest wait returned; larger (or infinite) waits become `maximum`.
    /// - Returns: the wait, or nil when `value` is neither delta-seconds nor an HTTP-date.
    static func delay(_ value: String, now: Date = Date(), maximum: Duration) -> Duration? {
        seconds(value, now: now).map { Duration.clamped(seconds: $0, to: maximum) }
    }

    /// The wait a `Retry-After` value asks for, in seconds: never negative, never NaN, possibly
    /// `+infinity` (for `inf` or an overflowing number).
    ///
    /// ```swift
    /// RetryAfter.seconds("-5")    // 0
    /// RetryAfter.seconds("inf")   // .infinity
    /// ```
    /// - Parameters:
    ///   - value: the header's value, surrounding whitespace allowed.
    ///   - now: the moment an HTTP-date is measured from.
    /// - Returns: the seconds to wait, or nil when `value` is unparseable.
    static func seconds(_ value: String, now: Date = Date()) -> Double? {
        let text = value.trimmingCharacters(in: .whitespacesAndNewlines)
        if let seconds = deltaSeconds(text) { return max(0, seconds) }
        guard let date = httpDate(text, now: now) else { return nil }
        return max(0, date - now.timeIntervalSince1970)
    }

    /// A decimal number (`120`, `1.5`, `-5`, `1e20`) or `inf`/`infinity` with an optional sign;
    /// nil for anything else, including `nan` and the hexadecimal forms `Double.init` accepts.
    static func deltaSeconds(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        var i = 0
        if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
        let word = String(decoding: bytes[i...], as: UTF8.self).lowercased()
        if word == "inf" || word == "infinity" { return bytes.first == UInt8(ascii: "-") ? -.infinity : .infinity }
        func digits() -> Int {
            let start = i
            while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") { i += 1 }
            return i - start
        }
        var count = digits()
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            count += digits()
        }
        guard count > 0 else { return nil }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { return nil }
        }
        guard i == bytes.count, let value = Double(text), !value.isNaN else { return nil }
        return value
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let shortDays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// An HTTP-date in any of its three forms, as seconds since 1970 (UTC); nil for anything else
    /// or an impossible day or time. A two-digit RFC 850 year more than 50 years after `now`'s
    /// year means the century before (RFC 9110 §5.6.7). Names match case-insensitively; the
    /// weekday is checked to be a weekday, not that it agrees with the date.
    static func httpDate(_ text: String, now: Date = Date()) -> Double? {
        var scanner = Scanner(Array(text.utf8))
        let dayName = scanner.letters()
        let year: Int, month: Int, day: Int, time: Int
        if scanner.take(",") {
            // IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT` or RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`.
            guard scanner.take(" "), let dd = scanner.number(digits: 1...2) else { return nil }
            day = dd
            if shortDays.contains(dayName) && scanner.take(" ") {
                guard let mm = monthNumber(scanner.letters()), scanner.take(" "), let yyyy = scanner.number(digits: 4...4),
                      scanner.take(" ") else { return nil }
                (month, year) = (mm, yyyy)
            } else if longDays.contains(dayName) && scanner.take("-") {
                guard let mm = monthNumber(scanner.letters()), scanner.take("-"), let yy = scanner.number(digits: 2...2),
                      scanner.take(" ") else { return nil }
                (month, year) = (mm, fullYear(yy, now: now))
            } else {
                return nil
            }
            guard let clock = scanner.clock(), scanner.take(" "), scanner.letters() == "gmt" else { return nil }
            time = clock
        } else {
            // asctime `Sun Nov  6 08:49:37 1994`.
            guard shortDays.contains(dayName), scanner.take(" "), let mm = monthNumber(scanner.letters()), scanner.take(" ") else {
                return nil
            }
            _ = scanner.take(" ")
            guard let dd = scanner.number(digits: 1...2), scanner.take(" "), let clock = scanner.clock(), scanner.take(" "),
                  let yyyy = scanner.number(digits: 4...4) else { return nil }
            (month, day, time, year) = (mm, dd, clock, yyyy)
        }
        guard scanner.atEnd, day >= 1, day <= ISO8601.daysIn(month: month, year: year) else { return nil }
        return Double(ISO8601.daysFromCivil(year: year, month: month, day: day) * 86_400 + time)
    }

    /// 1 for `jan` … 12 for `dec`.
    private static func monthNumber(_ name: String) -> Int? {
        months.firstIndex(of: name).map { $0 + 1 }
    }

    /// The most recent year ending in `yy` that is at most 50 years after `now`'s year.
    private static func fullYear(_ yy: Int, now: Date) -> Int {
        var seconds = time_t(now.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let current = Int(parts.tm_year) + 1900
        var year = current - current % 100 + yy
        if year > current + 50 { year -= 100 }
        return year
    }

    /// A cursor over ASCII bytes.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        /// Consumes `character` when it is next.
        mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        /// Consumes a run of ASCII letters, lowercased.
        mutating func letters() -> String {
            let start = index
            while index < bytes.count, (bytes[index] | 0x20) >= UInt8(ascii: "a"), (bytes[index] | 0x20) <= UInt8(ascii: "z") {
                index += 1
            }
            return String(decoding: bytes[start..<index].map { $0 | 0x20 }, as: UTF8.self)
        }

        /// Consumes a decimal number with a digit count in `digits`.
        mutating func number(digits: ClosedRange<Int>) -> Int? {
            let start = index
            var value = 0
            while index < bytes.count, index - start < digits.upperBound,
                  bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
            return digits.contains(index - start) ? value : nil
        }

        /// Consumes `HH:MM:SS` and returns the seconds since midnight (a leap second `60` allowed).
        mutating func clock() -> Int? {
            guard let hour = number(digits: 2...2), hour <= 23, take(":"), let minute = number(digits: 2...2), minute <= 59,
                  take(":"), let second = number(digits: 2...2), second <= 60 else { return nil }
            return hour * 3600 + minute * 60 + second
        }
    }
}

extension Duration {
    /// `seconds` as a duration in `0...maximum`, without trapping: NaN and negative values give
    /// `.zero`; values at or above `maximum` (infinity included) give `maximum` itself.
    ///
    /// ```swift
    /// Duration.clamped(seconds: 1e300, to: .seconds(30))   // .seconds(30)
    /// ```
    static func clamped(seconds: Double, to maximum: Duration) -> Duration {
        let maximum = Swift.max(.zero, maximum)
        guard seconds > 0 else { return .zero }
        guard seconds < maximum / .seconds(1) else { return maximum }
        if seconds < 9e9 { return Swift.min(maximum, .nanoseconds(Int64((seconds * 1e9).rounded()))) }
        return .seconds(Int64(Swift.min(seconds, 9e18)))
    }
}
