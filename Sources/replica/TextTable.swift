import Replica

/// An aligned text table fitted to a terminal width.
struct TextTable {
    var columns: [String]
    var rows: [[String]]

    /// How a value shows in a cell: one line, `null` for null, line breaks as ⏎ and other
    /// control characters as their Unicode control pictures (NUL as ␀, tab as ␉), never raw.
    static func cell(_ value: AttributeValue) -> String {
        var text = value.description
        if text.contains(where: \.isNewline) {
            text = text.split(whereSeparator: \.isNewline).joined(separator: "⏎")
        }
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return text }
        var visible = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0..<0x20: visible.append(Unicode.Scalar(0x2400 + scalar.value) ?? scalar)
            case 0x7F: visible.append("\u{2421}")
            default: visible.append(scalar)
            }
        }
        return String(visible)
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
