import Foundation

/// ISO 8601 / RFC 3339 dates without `DateFormatter`, shared by the store, the
/// mapping layer and the CLI.
package enum ISO8601 {
    /// The Unix seconds that have an ISO 8601 form with a four-digit year: 0000-01-01T00:00:00Z
    /// to 9999-12-31T23:59:59.999Z. Imports refuse dates outside it.
    static let representable: ClosedRange<Double> = -62_167_219_200 ... 253_402_300_799.999

    /// `2024-05-01T12:34:56Z`, or with milliseconds when the date has a fractional second; a
    /// date outside ``representable`` (only a custom transform can make one) prints as its Unix
    /// seconds, `1e+22 s since 1970`, instead of trapping.
    static func string(from date: Date) -> String {
        guard representable.contains(date.timeIntervalSince1970) else {
            return "\(date.timeIntervalSince1970) s since 1970"
        }
        let totalMillis = (date.timeIntervalSince1970 * 1000).rounded()
        let whole = (totalMillis / 1000).rounded(.down)
        let millis = Int(totalMillis - whole * 1000)
        var time = time_t(whole)
        var parts = tm()
        gmtime_r(&time, &parts)
        var text = String(format: "%04d-%02d-%02dT%02d:%02d:%02d",
                          Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                          Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
        if millis > 0 { text += String(format: ".%03d", millis) }
        return text + "Z"
    }

    /// `2024-05-01T14:34:56+02:00`: the local time in `timeZone` with its offset (DST included),
    /// or ``string(from:)``'s UTC form with `Z` when the offset is zero.
    static func string(from date: Date, in timeZone: TimeZone) -> String {
        let offset = timeZone.secondsFromGMT(for: date)
        guard offset != 0, representable.contains(date.timeIntervalSince1970 + Double(offset)) else { return string(from: date) }
        let local = string(from: date.addingTimeInterval(TimeInterval(offset)))
        let minutes = abs(offset) / 60
        return String(local.dropLast()) + String(format: "%@%02d:%02d", offset < 0 ? "-" : "+", minutes / 60, minutes % 60)
    }

    /// Parses `2024-05-01`, `2024-05-01T12:34`, `2024-05-01T12:34:56`, with optional
    /// fractional seconds (any number of digits) and zone (`Z`, `±HH:MM`, `±HHMM`, `±HH`);
    /// a space may replace the `T`. A date without a zone is UTC.
    ///
    /// - Returns: The seconds since 1970 (UTC), or `nil` when the text is not such a date
    ///   or names an impossible day or time.
    static func seconds(_ text: String.UTF8View) -> Double? {
        var text = String(text)
        return text.withUTF8 { seconds(UnsafeRawBufferPointer($0)) }
    }

    /// Parses the UTF-8 bytes of an ISO 8601 date; see ``seconds(_:)-(String.UTF8View)``.
    static func seconds(_ bytes: UnsafeRawBufferPointer) -> Double? {
        let count = bytes.count
        if count == 20, let base = bytes.baseAddress, let seconds = utcSeconds(base.assumingMemoryBound(to: UInt8.self)) {
            return seconds
        }
        var i = 0
        @inline(__always) func digits(_ n: Int) -> Int? {
            guard i + n <= count else { return nil }
            var value = 0
            for k in i..<(i + n) {
                let d = Int(bytes[k]) - 0x30
                guard d >= 0, d <= 9 else { return nil }
                value = value * 10 + d
            }
            i += n
            return value
        }
        @inline(__always) func expect(_ byte: UInt8) -> Bool {
            guard i < count, bytes[i] == byte else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(0x2D), let month = digits(2), expect(0x2D), let day = digits(2) else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        var hour = 0, minute = 0, second = 0
        var fraction = 0.0
        var offset = 0
        if i < count, bytes[i] == 0x54 || bytes[i] == 0x74 || bytes[i] == 0x20 {  // T, t or space
            i += 1
            guard let h = digits(2), expect(0x3A), let m = digits(2) else { return nil }
            hour = h
            minute = m
            if expect(0x3A) {
                guard let s = digits(2) else { return nil }
                second = s
                if i < count, bytes[i] == 0x2E || bytes[i] == 0x2C {  // . or ,
                    i += 1
                    var scale = 0.1
                    let start = i
                    while i < count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                        fraction += Double(bytes[i] - 0x30) * scale
                        scale /= 10
                        i += 1
                    }
                    guard i > start else { return nil }
                }
            }
            guard hour <= 23, minute <= 59, second <= 60 else { return nil }
            if i < count, bytes[i] == 0x5A || bytes[i] == 0x7A {  // Z or z
                i += 1
            } else if i < count, bytes[i] == 0x2B || bytes[i] == 0x2D {  // + or -
                let sign = bytes[i] == 0x2B ? 1 : -1
                i += 1
                guard let oh = digits(2), oh <= 23 else { return nil }
                var om = 0
                if expect(0x3A) {
                    guard let m = digits(2) else { return nil }
                    om = m
                } else if i < count {
                    guard let m = digits(2) else { return nil }
                    om = m
                }
                guard om <= 59 else { return nil }
                offset = sign * (oh * 3600 + om * 60)
            }
        }
        guard i == count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset
        return Double(seconds) + fraction
    }

    /// The most common form, `2024-05-01T12:34:56Z` (20 bytes), read without the general
    /// parser's loops; `nil` for anything else, which the general parser then reads (or refuses).
    @inline(__always)
    private static func utcSeconds(_ b: UnsafePointer<UInt8>) -> Double? {
        guard b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x54, b[13] == 0x3A, b[16] == 0x3A, b[19] == 0x5A else { return nil }
        var valid = true
        @inline(__always) func digit(_ index: Int) -> Int {
            let d = b[index] &- 0x30
            valid = valid && d < 10
            return Int(d)
        }
        let year = digit(0) * 1000 + digit(1) * 100 + digit(2) * 10 + digit(3)
        let month = digit(5) * 10 + digit(6)
        let day = digit(8) * 10 + digit(9)
        let hour = digit(11) * 10 + digit(12)
        let minute = digit(14) * 10 + digit(15)
        let second = digit(17) * 10 + digit(18)
        guard valid, month >= 1, month <= 12, day >= 1, day <= daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 60
        else { return nil }
        return Double(daysFromCivil(year: year, month: month, day: day) * 86400 + hour * 3600 + minute * 60 + second)
    }

    /// Parses a date string; see ``seconds(_:)``.
    package static func date(from text: String) -> Date? {
        seconds(text.utf8).map { Date(timeIntervalSince1970: $0) }
    }

    package static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    @inline(__always)
    package static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }
}
