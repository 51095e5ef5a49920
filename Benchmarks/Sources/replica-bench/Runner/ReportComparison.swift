/// Two reports side by side (`replica-bench compare OLD.json NEW.json`): each row's value in both
/// and how the new one compares, as a Markdown table. Meant for old and new binaries run one after
/// the other on the same machine (`Scripts/old_vs_new.sh`).
///
/// Rows are matched on their workload and unit; a row present in one report only is listed with
/// `—` for the other (an old binary has no rows for the tools added since, say). Baseline values
/// are listed too (one line per baseline, `… · C floor`), unless `replicaOnly`: a baseline that
/// moved between the runs shows how much of a change is the machine's.
///
/// ```swift
/// let table = ReportComparison(old: try .load(path: "old.json"), new: try .load(path: "new.json")).markdown()
/// ```
struct ReportComparison {
    var old: Report
    var new: Report
    /// Leave out the baselines' values.
    var replicaOnly = false
    /// Column titles; the reports' commits when `nil`.
    var oldLabel: String?
    var newLabel: String?

    /// One compared value.
    private struct Line {
        var title: String
        var unit: String
        var old: Cell?
        var new: Cell?
    }

    /// The comparison as Markdown: a line for each run, then the table.
    func markdown() -> String {
        let oldTitle = oldLabel ?? "old: \(old.machine.replicaRevision)"
        let newTitle = newLabel ?? "new: \(new.machine.replicaRevision)"
        var output = [
            "Old: " + Self.describe(old) + "  ",
            "New: " + Self.describe(new),
            "",
            "| workload | \(oldTitle) | \(newTitle) | new ÷ old | change |",
            "|---|---|---|---|---|",
        ]
        for line in lines() {
            let ratio: String
            let change: String
            if let before = line.old?.value, let after = line.new?.value, before > 0, after > 0 {
                ratio = Report.formatRatio(after / before)
                // Rates: higher is better; `ms` and `s` rows are times: lower is better.
                let lowerIsBetter = line.unit == "ms" || line.unit == "s"
                let speedup = lowerIsBetter ? before / after : after / before
                change = speedup >= 1 ? String(format: "%.1f %% better", (speedup - 1) * 100)
                    : String(format: "%.1f %% worse", (1 / speedup - 1) * 100)
            } else {
                ratio = "—"
                change = line.old == nil ? "new only" : line.new == nil ? "old only" : "—"
            }
            output.append("| \(line.title) (\(line.unit)) | \(line.old.map { Report.format($0, unit: line.unit) } ?? "—") | "
                          + "\(line.new.map { Report.format($0, unit: line.unit) } ?? "—") | \(ratio) | \(change) |")
        }
        return output.joined(separator: "\n") + "\n"
    }

    /// Every row of the new report in its order, then the old report's rows it lacks.
    private func lines() -> [Line] {
        func keyed(_ report: Report) -> [(key: String, line: Line)] {
            var result: [(key: String, line: Line)] = []
            var seen: [String: Int] = [:]
            for row in report.rows {
                // A repeated workload and unit (none today) is matched by its occurrence.
                let base = row.workload + "\u{1F}" + row.unit
                let occurrence = seen[base, default: 0]
                seen[base] = occurrence + 1
                let key = base + "\u{1F}\(occurrence)"
                result.append((key, Line(title: row.workload, unit: row.unit, old: nil, new: row.replica)))
                if !replicaOnly {
                    for baseline in row.baselines {
                        result.append((key + "\u{1F}" + baseline.name,
                                       Line(title: "\(row.workload) · \(baseline.name)", unit: row.unit, old: nil, new: baseline.cell)))
                    }
                }
            }
            return result
        }
        let oldLines = keyed(old)
        let oldByKey = Dictionary(oldLines.map { ($0.key, $0.line.new) }, uniquingKeysWith: { first, _ in first })
        var lines: [Line] = []
        var matched = Set<String>()
        for (key, line) in keyed(new) {
            var line = line
            if let cell = oldByKey[key] {
                line.old = cell
                matched.insert(key)
            }
            lines.append(line)
        }
        for (key, line) in oldLines where !matched.contains(key) {
            lines.append(Line(title: line.title, unit: line.unit, old: line.new, new: nil))
        }
        return lines
    }

    private static func describe(_ report: Report) -> String {
        "Replica \(report.machine.replicaRevision), \(report.machine.date), mode \(report.machine.mode)"
            + (report.command.map { ", `\($0)`" } ?? "")
            + ", \(report.machine.processors) cores, \(report.machine.cpuModel), SQLite \(report.machine.sqliteVersion)."
    }
}
