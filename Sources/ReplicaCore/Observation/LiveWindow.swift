/// A moving window onto a live result: a range of its rows by position, or the rows around one
/// key. The result set tracks the whole result by keys and sort values; its snapshots and diffs
/// cover the window only, as a list view scrolled somewhere in a million rows needs.
///
/// ```swift
/// var query = LiveQuery("Item", sort: [.ascending("name")])
/// query.window = .rows(1_000 ..< 1_040)                       // rows 1,001–1,040
/// let items = try LiveResultSet(engine: engine, query: query)
/// try await items.moveWindow(to: .around(.integer(42), before: 20, after: 19))
/// print(items.snapshot.windowStart, items.snapshot.totalCount)
/// ```
public struct LiveWindow: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        case rows(offset: Int, limit: Int)
        case around(key: AttributeValue, before: Int, after: Int)
    }

    let kind: Kind

    /// The rows at positions `range` of the whole result (fewer near its end).
    ///
    /// ```swift
    /// let page = LiveWindow.rows(40 ..< 80)
    /// ```
    ///
    /// - Parameter range: Positions, 0-based.
    /// - Returns: The window.
    public static func rows(_ range: Range<Int>) -> LiveWindow {
        LiveWindow(kind: .rows(offset: max(0, range.lowerBound), limit: max(0, range.count)))
    }

    /// The row with primary key `key` and up to `before` rows before it and `after` rows after it.
    /// When the row leaves the result, the window stays where it was.
    ///
    /// ```swift
    /// let around = LiveWindow.around(.integer(42), before: 10, after: 10)
    /// ```
    ///
    /// - Parameters:
    ///   - key: The primary key.
    ///   - before: Rows shown before it.
    ///   - after: Rows shown after it.
    /// - Returns: The window.
    public static func around(_ key: AttributeValue, before: Int, after: Int) -> LiveWindow {
        LiveWindow(kind: .around(key: key, before: max(0, before), after: max(0, after)))
    }

    public var description: String {
        switch kind {
        case .rows(let offset, let limit): return "rows \(offset)..<\(offset + limit)"
        case .around(let key, let before, let after): return "\(before) rows before \(key), \(after) after"
        }
    }

    /// The flat range the window covers in a result of `total` rows, given where `key` is (for
    /// `around`) and where the window started last time (kept when the key is gone).
    func range(total: Int, keyPosition: Int?, previousStart: Int) -> Range<Int> {
        switch kind {
        case .rows(let offset, let limit):
            let start = min(offset, total)
            return start ..< min(total, start + limit)
        case .around(_, let before, let after):
            guard let position = keyPosition else {
                let start = min(previousStart, total)
                return start ..< min(total, start + before + 1 + after)
            }
            return max(0, position - before) ..< min(total, position + after + 1)
        }
    }
}
