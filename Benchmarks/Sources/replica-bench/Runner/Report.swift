import Foundation

/// One measured value (or why there is none).
struct Cell: Codable, Sendable {
    /// The measured value in the row's unit (a rate, higher is better, except latencies in `ms`); `nil` when not measured.
    var value: Double?
    /// Why there is no value ("failed: …", "not measured yet"), or a remark shown beside it.
    var note: String?

    init(_ value: Double? = nil, note: String? = nil) {
        self.value = value
        self.note = note
    }
}

/// A baseline's value in one row.
struct BaselineCell: Codable, Sendable {
    /// The baseline, e.g. `C floor`; also its column in the table.
    var name: String
    /// Its value.
    var cell: Cell
    /// The least `Replica ÷ baseline` ratio the project aims for, if any.
    var minimumRatio: Double?
}

/// One implementation's peak resident memory.
struct MemoryReading: Codable, Sendable {
    /// `Replica` or a baseline name.
    var name: String
    /// Peak resident set size in bytes.
    var bytes: Int
    /// The most it may use, if there is a target.
    var limit: Int?
}

/// A target that is not a ratio, e.g. "≥ 5 M lookups/s", and whether it was met.
struct Target: Codable, Sendable {
    /// The target as shown in the table.
    var description: String
    /// Whether it was met; `nil` when it could not be checked.
    var met: Bool?
}

/// One line of the report table.
struct ResultRow: Codable, Sendable {
    /// What was measured, e.g. `import, pass 1: insert`.
    var workload: String
    /// The unit of every value in the row, e.g. `rows/s`.
    var unit: String
    /// Replica's value.
    var replica: Cell
    /// The baselines' values, in column order.
    var baselines: [BaselineCell] = []
    /// Peak memory of each implementation's child process.
    var peakMemory: [MemoryReading] = []
    /// Targets that are not ratios or memory limits.
    var targets: [Target] = []
    /// Footnotes for this row.
    var notes: [String] = []
}

/// The machine a run happened on.
struct MachineInfo: Codable, Sendable {
    var date: String
    var processors: Int
    var cpuModel: String
    var memory: String
    var system: String
    var sqliteVersion: String
    var mode: String
    /// The Replica commit measured, with `+ uncommitted changes` when `Sources/Replica` differs from it.
    var replicaRevision: String
}

/// The result of one run; renders as a Markdown table or JSON.
///
/// ```swift
/// let report = Report(machine: .current(quick: false), rows: rows)
/// print(report.markdown())
/// ```
struct Report: Codable, Sendable {
    /// Where and when the run happened.
    var machine: MachineInfo
    /// The rows, in workload order.
    var rows: [ResultRow]
    /// The command that made the report, e.g. `replica-bench --only import --runs 1` (`nil` in reports
    /// of binaries older than issue 31).
    var command: String?
    /// How long the whole run took, in seconds.
    var seconds: Double?

    /// The baseline columns: every baseline name, in first-seen order.
    var baselineColumns: [String] {
        var names: [String] = []
        for row in rows {
            for baseline in row.baselines where !names.contains(baseline.name) {
                names.append(baseline.name)
            }
        }
        return names
    }

    /// The report as Markdown: a machine line and one table.
    func markdown() -> String {
        let columns = baselineColumns
        var lines: [String] = []
        if let command {
            lines.append("Command: `\(command)`" + (seconds.map { String(format: " (took %.1f min)", $0 / 60) } ?? "") + ".  ")
        }
        lines.append("Machine: \(machine.processors) cores, \(machine.cpuModel), \(machine.memory) RAM; "
                     + "\(machine.system); SQLite \(machine.sqliteVersion).  ")
        lines.append("Date: \(machine.date); mode: \(machine.mode); Replica \(machine.replicaRevision).")
        lines.append("")
        let header = ["workload", "Replica"] + columns + ["Replica ÷ baseline", "peak memory", "target"]
        lines.append("| " + header.joined(separator: " | ") + " |")
        lines.append("|" + header.map { _ in "---" }.joined(separator: "|") + "|")
        var footnotes: [String] = []
        for row in rows {
            var cells = ["\(row.workload) (\(row.unit))", Self.format(row.replica, unit: row.unit)]
            for column in columns {
                cells.append(row.baselines.first { $0.name == column }.map { Self.format($0.cell, unit: row.unit) } ?? "—")
            }
            cells.append(ratios(row))
            cells.append(row.peakMemory.isEmpty ? "—" : row.peakMemory.map(Self.format).joined(separator: "<br>"))
            cells.append(row.targets.isEmpty ? "—" : row.targets.map(Self.format).joined(separator: "<br>"))
            lines.append("| " + cells.joined(separator: " | ") + " |")
            footnotes += row.notes.filter { !footnotes.contains($0) }
        }
        if !footnotes.isEmpty {
            lines.append("")
            lines += footnotes.map { "- \($0)" }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The report as pretty-printed JSON.
    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self) + "\n"
    }

    private func ratios(_ row: ResultRow) -> String {
        guard let replica = row.replica.value else { return "—" }
        let parts = row.baselines.compactMap { baseline -> String? in
            guard let value = baseline.cell.value, value > 0 else { return nil }
            let ratio = replica / value
            var text = "\(baseline.name) \(Self.formatRatio(ratio))"
            if let minimum = baseline.minimumRatio {
                text += " (≥ \(Self.formatTargetRatio(minimum)) \(ratio >= minimum ? "✅" : "❌"))"
            }
            return text
        }
        return parts.isEmpty ? "—" : parts.joined(separator: "<br>")
    }

    /// `1.23 M`, `456 k`, `789`, `12.34`, or the cell's note. A time (`unit` `ms` or `s`) is
    /// written whole, never scaled: `1223`, not `1.2 k`.
    static func format(_ cell: Cell, unit: String? = nil) -> String {
        guard let value = cell.value else { return cell.note ?? "—" }
        let number = formatNumber(value, unit: unit)
        if let note = cell.note { return "\(number) (\(note))" }
        return number
    }

    static func formatNumber(_ value: Double, unit: String? = nil) -> String {
        if unit == "ms" || unit == "s" {
            return value >= 100 ? String(format: "%.0f", value) : String(format: "%.2f", value)
        }
        switch value {
        case 1e9...: return String(format: "%.2f G", value / 1e9)
        case 1e6...: return String(format: "%.2f M", value / 1e6)
        case 1e4...: return String(format: "%.0f k", value / 1e3)
        case 1e3...: return String(format: "%.1f k", value / 1e3)
        case 100...: return String(format: "%.0f", value)
        default: return String(format: "%.2f", value)   // latencies in milliseconds
        }
    }

    static func formatRatio(_ ratio: Double) -> String {
        ratio >= 10 ? String(format: "%.0f×", ratio) : String(format: "%.2f×", ratio)
    }

    /// A target ratio as written, to two decimals without trailing zeros: `0.8×`, `5×`, and
    /// `0.77×` for a target stated as a time (at most 1.3× of a baseline's time is ≥ 1 / 1.3 of its
    /// rate), which `%g` printed as `0.769231×`.
    static func formatTargetRatio(_ ratio: Double) -> String {
        var text = String(format: "%.2f", ratio)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text + "×"
    }

    /// `87 MB`, `1.25 GB` (decimal units, as the targets are written).
    static func formatBytes(_ bytes: Int) -> String {
        let megabytes = Double(bytes) / 1e6
        return megabytes >= 1000 ? String(format: "%.2f GB", megabytes / 1000) : String(format: "%.0f MB", megabytes)
    }

    /// `1,000,000`.
    static func formatCount(_ count: Int) -> String {
        let digits = Array(String(count.magnitude))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return count < 0 ? "-" + text : text
    }

    static func format(_ memory: MemoryReading) -> String {
        var text = "\(memory.name) \(formatBytes(memory.bytes))"
        if let limit = memory.limit {
            text += " (≤ \(formatBytes(limit)) \(memory.bytes <= limit ? "✅" : "❌"))"
        }
        return text
    }

    static func format(_ target: Target) -> String {
        switch target.met {
        case true?: return "\(target.description) ✅"
        case false?: return "\(target.description) ❌"
        case nil: return target.description
        }
    }
}
