import Foundation

/// ISO 8601 / RFC 3339 dates without `DateFormatter`, shared by the store, the
/// mapping layer and the CLI.
enum ISO8601 {
    /// `2024-05-01T12:34:56Z`, or with milliseconds when the date has a fractional second.
    static func string(from date: Date) -> String {
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

    /// Parses `2024-05-01`, `2024-05-01T12:34`, `2024-05-01T12:34:56`, with optional
    /// fractional seconds (any number of digits) and zone (`Z`, `±HH:MM`, `±HHMM`, `±HH`);
    /// a space may replace the `T`. A date without a zone is UTC.
    ///
    /// - Returns: The seconds since 1970 (UTC), or `nil` when the text is not such a date
    ///   or names an impossible day or time.
    static func seconds(_ text: some Collection<UInt8>) -> Double? {
        var bytes = text.makeIterator()
        var peeked: UInt8? = bytes.next()
        func take() -> UInt8? { defer { peeked = bytes.next() }; return peeked }
        func digits(_ count: Int) -> Int? {
            var value = 0
            for _ in 0..<count {
                guard let byte = peeked, byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
                _ = take()
            }
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard peeked == byte else { return false }
            _ = take()
            return true
        }
        guard let year = digits(4), expect(0x2D), let month = digits(2), expect(0x2D), let day = digits(2) else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        var hour = 0, minute = 0, second = 0
        var fraction = 0.0
        var offset = 0
        if peeked == 0x54 || peeked == 0x74 || peeked == 0x20 {  // T, t or space
            _ = take()
            guard let h = digits(2), expect(0x3A), let m = digits(2) else { return nil }
            hour = h
            minute = m
            if expect(0x3A) {
                guard let s = digits(2) else { return nil }
                second = s
                if peeked == 0x2E || peeked == 0x2C {  // . or ,
                    _ = take()
                    var scale = 0.1
                    var any = false
                    while let byte = peeked, byte >= 0x30, byte <= 0x39 {
                        fraction += Double(byte - 0x30) * scale
                        scale /= 10
                        any = true
                        _ = take()
                    }
                    guard any else { return nil }
                }
            }
            guard hour <= 23, minute <= 59, second <= 60 else { return nil }
            if peeked == 0x5A || peeked == 0x7A {  // Z or z
                _ = take()
            } else if peeked == 0x2B || peeked == 0x2D {  // + or -
                let sign = take() == 0x2B ? 1 : -1
                guard let oh = digits(2), oh <= 23 else { return nil }
                var om = 0
                if expect(0x3A) {
                    guard let m = digits(2) else { return nil }
                    om = m
                } else if peeked != nil {
                    guard let m = digits(2) else { return nil }
                    om = m
                }
                guard om <= 59 else { return nil }
                offset = sign * (oh * 3600 + om * 60)
            }
        }
        guard peeked == nil else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset
        return Double(seconds) + fraction
    }

    /// Parses a date string; see ``seconds(_:)``.
    static func date(from text: String) -> Date? {
        seconds(text.utf8).map { Date(timeIntervalSince1970: $0) }
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }
}
