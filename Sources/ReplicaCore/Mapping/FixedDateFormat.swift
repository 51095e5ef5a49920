import Foundation

/// A `DateFormatter` for one attribute's `date:FORMAT` transform: POSIX locale,
/// UTC unless the format has a zone field, strict (not lenient). Built once per attribute.
///
/// `@unchecked Sendable`: the formatter is mutable reference state that
/// Foundation does not promise to be thread-safe on every platform, so every
/// use goes through `lock`; `format` is immutable.
final class FixedDateFormat: @unchecked Sendable {
    /// The `DateFormatter` pattern, e.g. `yyyy-MM-dd HH:mm`.
    let format: String
    private let formatter: DateFormatter
    private let lock = NSLock()

    init(_ format: String) {
        self.format = format
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.dateFormat = format
        formatter.isLenient = false
        self.formatter = formatter
    }

    /// The date `text` stands for, or `nil` when it does not match the format or names an impossible date.
    func date(from text: String) -> Date? {
        lock.lock()
        defer { lock.unlock() }
        return formatter.date(from: text)
    }

    /// The date formatted with the pattern.
    func string(from date: Date) -> String {
        lock.lock()
        defer { lock.unlock() }
        return formatter.string(from: date)
    }
}
