/// Renders one screen of a result set as text: a header with the query and row count, the
/// visible window of sections (as headings) and rows (an aligned table fitted to the width, changed
/// rows highlighted), and a position line ("rows 1,001–1,040 of 1,000,000") with the keys.
///
/// Only the window's lines are built and measured, so a screen costs the same whatever the size
/// of the result.
struct WatchScreen {
    /// How a row just changed.
    enum Mark {
        case none, inserted, updated, deleted
    }

    struct Row {
        var cells: [String]
        var mark: Mark
    }

    /// One line of the scrolling body.
    enum Line {
        case section(String)
        case row(Row)
    }

    var title: String
    var status: String
    var columns: [String]
    /// The body lines in view, at most ``bodyHeight(height:)`` of them.
    var lines: [Line]
    /// The rows of the result (deleted rows still fading out not included).
    var rowCount: Int
    /// The 1-based numbers of the first and last rows in view, `nil` when none is.
    var visibleRows: ClosedRange<Int>?
    /// An extra line under the status, when set.
    var footer: String? = nil

    static let reset = "\u{1B}[0m"

    static func style(_ mark: Mark) -> String {
        switch mark {
        case .none: return ""
        case .inserted: return "\u{1B}[30;42m"   // black on green
        case .updated: return "\u{1B}[30;43m"    // black on yellow
        case .deleted: return "\u{1B}[9;31m"     // red, struck through
        }
    }

    /// The lines above the body: title, status, the footer when there is one, column names.
    static func headerHeight(hasFooter: Bool) -> Int { hasFooter ? 4 : 3 }

    /// The body lines a screen of `height` lines shows (the position line takes the last one).
    static func bodyHeight(height: Int, hasFooter: Bool) -> Int {
        max(1, height - headerHeight(hasFooter: hasFooter) - 1)
    }

    /// The position line: which rows are in view, and the keys.
    var position: String {
        let range = visibleRows.map { "rows \(Self.grouped($0.lowerBound))–\(Self.grouped($0.upperBound)) of \(Self.grouped(rowCount))" }
            ?? "\(Self.grouped(rowCount)) rows"
        return range + " · ↑↓ PgUp PgDn Home End (g G) · q quits"
    }

    /// The screen, at most `height` lines of at most `width` columns.
    func render(width: Int, height: Int) -> String {
        var header: [String] = []
        header.append("\u{1B}[1m" + TextTable.fit(title, width).trimmingTrailingSpaces() + Self.reset)
        header.append(TextTable.fit("\(Self.grouped(rowCount)) \(rowCount == 1 ? "row" : "rows") · \(status) · q quits", width)
            .trimmingTrailingSpaces())
        if let footer { header.append("\u{1B}[2m" + TextTable.fit(footer, width).trimmingTrailingSpaces() + Self.reset) }
        let rows = lines.compactMap { line -> [String]? in
            if case .row(let row) = line { return row.cells }
            return nil
        }
        let table = TextTable(columns: columns, rows: rows)
        let widths = table.widths(maxWidth: width)
        header.append("\u{1B}[4m" + table.line(columns, widths) + Self.reset)
        var body: [String] = []
        for line in lines.prefix(Self.bodyHeight(height: height, hasFooter: footer != nil)) {
            switch line {
            case .section(let title):
                body.append("\u{1B}[1;36m" + TextTable.fit("── \(title) " + String(repeating: "─", count: max(0, width)), width)
                    .trimmingTrailingSpaces() + Self.reset)
            case .row(let row):
                let text = table.line(row.cells, widths)
                body.append(row.mark == .none ? text : Self.style(row.mark) + text + Self.reset)
            }
        }
        // The position line sits on the last line of the terminal, however short the result.
        let room = max(0, height - header.count - 1)
        body += Array(repeating: "", count: max(0, room - body.count))
        let bottom = "\u{1B}[7m" + TextTable.fit(position, width).trimmingTrailingSpaces() + Self.reset
        return (header + body.prefix(room) + [bottom]).map { $0 + "\u{1B}[K" }.joined(separator: "\n")
    }

    /// `1234567` → `1,234,567`, whatever the locale (the view's numbers must read the same everywhere).
    static func grouped(_ number: Int) -> String {
        let digits = String(number.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return number < 0 ? "-" + result : result
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }
}
