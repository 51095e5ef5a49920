import Foundation

/// A `DateFormatter` for one attribute's `date:FORMAT` transform: POSIX locale,
/// UTC unless the format has a zone field, strict (not lenient). Built once per attribute.
///
/// The formatter is mutable reference state that Foundation does not promise to be thread-safe
/// on every platform, so every use goes through its ``Locked``.
final class FixedDateFormat: Sendable {
    /// The `DateFormatter` pattern, e.g. `yyyy-MM-dd HH:mm`.
    let format: String
    private let formatter: Locked<DateFormatter>

    init(_ format: String) {
        self.format = format
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.dateFormat = format
        formatter.isLenient = false
        self.formatter = Locked(formatter)
    }

    /// The date `text` stands for, or `nil` when it does not match the format or names an impossible date.
    func date(from text: String) -> Date? {
        formatter.withLock { $0.date(from: text) }
    }

    /// The date formatted with the pattern.
    func string(from date: Date) -> String {
        formatter.withLock { $0.string(from: date) }
    }
}
