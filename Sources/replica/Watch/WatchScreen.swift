/// Renders a result set as a screen of text: a header with the query and row count, sections
/// as headings, rows as an aligned table fitted to the width, changed rows highlighted.
struct WatchScreen {
    /// How a row just changed.
    enum Mark {
        case none, inserted, updated, deleted
    }

    struct Row {
        var cells: [String]
        var mark: Mark
    }

    struct Section {
        var title: String?
        var rows: [Row]
    }

    var title: String
    var status: String
    var columns: [String]
    var sections: [Section]
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

    /// The screen, at most `height` lines of at most `width` columns.
    func render(width: Int, height: Int) -> String {
        let rowCount = sections.reduce(0) { $0 + $1.rows.filter { $0.mark != .deleted }.count }
        var lines: [String] = []
        lines.append("\u{1B}[1m" + TextTable.fit(title, width).trimmingTrailingSpaces() + Self.reset)
        lines.append(TextTable.fit("\(rowCount) \(rowCount == 1 ? "row" : "rows") · \(status) · q quits", width)
            .trimmingTrailingSpaces())
        if let footer { lines.append("\u{1B}[2m" + TextTable.fit(footer, width).trimmingTrailingSpaces() + Self.reset) }
        let table = TextTable(columns: columns, rows: sections.flatMap { $0.rows.map(\.cells) })
        let widths = table.widths(maxWidth: width)
        lines.append("\u{1B}[4m" + table.line(columns, widths) + Self.reset)
        var body: [String] = []
        for section in sections {
            if let title = section.title {
                body.append("\u{1B}[1;36m" + TextTable.fit("── \(title) " + String(repeating: "─", count: max(0, width)), width)
                    .trimmingTrailingSpaces() + Self.reset)
            }
            for row in section.rows {
                let text = table.line(row.cells, widths)
                body.append(row.mark == .none ? text : Self.style(row.mark) + text + Self.reset)
            }
        }
        let room = max(0, height - lines.count)
        if body.count > room {
            body = Array(body.prefix(max(0, room - 1)))
            body.append("… \(rowCount) rows in all; enlarge the terminal to see more")
        }
        return (lines + body).map { $0 + "\u{1B}[K" }.joined(separator: "\n")
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }
}
