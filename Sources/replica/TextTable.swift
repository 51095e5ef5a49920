import Replica

/// An aligned text table fitted to a terminal width.
struct TextTable {
    var columns: [String]
    var rows: [[String]]

    /// How a value shows in a cell: one line, `null` for null.
    static func cell(_ value: AttributeValue) -> String {
        var text = value.description
        if text.contains(where: \.isNewline) {
            text = text.split(whereSeparator: \.isNewline).joined(separator: "⏎")
        }
        return text
    }

    /// The widths of each column, shrunk (widest first) to fit `maxWidth` when given.
    func widths(maxWidth: Int?) -> [Int] {
        var widths = columns.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        guard let maxWidth, !widths.isEmpty else { return widths }
        let separators = 2 * (widths.count - 1)
        while widths.reduce(0, +) + separators > maxWidth {
            guard let widest = widths.indices.max(by: { widths[$0] < widths[$1] }), widths[widest] > 4 else { break }
            widths[widest] -= 1
        }
        return widths
    }

    func render(maxWidth: Int?) -> String {
        let widths = widths(maxWidth: maxWidth)
        var output = line(columns, widths) + "\n"
        output += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
        for row in rows { output += line(row, widths) + "\n" }
        return output
    }

    func line(_ cells: [String], _ widths: [Int]) -> String {
        var parts: [String] = []
        for (index, width) in widths.enumerated() {
            let cell = index < cells.count ? cells[index] : ""
            parts.append(Self.fit(cell, width))
        }
        var text = parts.joined(separator: "  ")
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }

    static func fit(_ text: String, _ width: Int) -> String {
        if text.count <= width { return text + String(repeating: " ", count: width - text.count) }
        return String(text.prefix(max(0, width - 1))) + "…"
    }
}
