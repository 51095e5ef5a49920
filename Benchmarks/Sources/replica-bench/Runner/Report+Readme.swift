import Foundation

/// Writes a run's report into the READMEs, between marker comments, so their tables are
/// generated from a run and never copied by hand (issue 31).
///
/// `Benchmarks/README.md`'s "Last run" section gets the whole table (``Report/markdown()``: the
/// command, machine, date and commit, every row and its footnotes); the root `README.md`'s
/// Performance section gets ``Report/summaryMarkdown()``. Everything outside the markers is left
/// byte for byte as it was.
///
/// ```swift
/// let report = try Report.load(path: "run.json")
/// try ReadmeWriter.write(report, root: "/path/to/repo")
/// ```
enum ReadmeWriter {
    /// The line before the generated text.
    static let beginMarker = "<!-- bench:begin -->"
    /// The line after it.
    static let endMarker = "<!-- bench:end -->"

    /// Replaces the generated block of `Benchmarks/README.md` and `README.md` under `root`.
    ///
    /// - Returns: The files written.
    /// - Throws: ``BenchmarkError`` when a file cannot be read or does not hold exactly one pair of markers.
    @discardableResult
    static func write(_ report: Report, root: String) throws -> [String] {
        let files = [
            ((root as NSString).appendingPathComponent("Benchmarks/README.md"), report.markdown()),
            ((root as NSString).appendingPathComponent("README.md"), report.summaryMarkdown()),
        ]
        // Both are checked before either is written.
        let updated = try files.map { path, block in
            (path, try replaceBlock(in: try String(contentsOfFile: path, encoding: .utf8), with: block, file: path))
        }
        for (path, text) in updated {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }
        return updated.map(\.0)
    }

    /// `text` with the lines between the markers replaced by `block` (blank lines around it).
    ///
    /// - Throws: ``BenchmarkError`` unless `text` holds each marker once, on a line of its own, begin first.
    static func replaceBlock(in text: String, with block: String, file: String) throws -> String {
        var lines = text.components(separatedBy: "\n")
        let begins = lines.indices.filter { lines[$0] == beginMarker }
        let ends = lines.indices.filter { lines[$0] == endMarker }
        guard begins.count == 1, ends.count == 1, let begin = begins.first, let end = ends.first, begin < end else {
            throw BenchmarkError("\(file): expected one line '\(beginMarker)' and after it one line '\(endMarker)'; "
                                 + "found \(begins.count) and \(ends.count)")
        }
        var blockLines = block.components(separatedBy: "\n")
        if blockLines.last == "" { blockLines.removeLast() }
        lines.replaceSubrange((begin + 1)..<end, with: [""] + blockLines + [""])
        return lines.joined(separator: "\n")
    }
}

extension Report {
    /// Reads a report written by `replica-bench --json`.
    ///
    /// - Throws: ``BenchmarkError`` naming the file when it cannot be read or decoded.
    static func load(path: String) throws -> Report {
        do {
            return try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw BenchmarkError("\(path): not a replica-bench --json report: \(error)")
        }
    }

    /// Reports of one binary's runs of different workloads as one report: the rows in the order
    /// given, the first report's machine (its date the earliest), the commands joined with `; `
    /// and the durations added.
    ///
    /// ```swift
    /// let whole = try Report.merged([try Report.load(path: "import.json"), try Report.load(path: "watch.json")])
    /// whole.rows.count   // both reports' rows
    /// ```
    /// - Throws: ``BenchmarkError`` when there is no report, or when the reports come from different
    ///   commits, machines or modes (quick and full).
    static func merged(_ reports: [Report]) throws -> Report {
        guard var merged = reports.first else { throw BenchmarkError("merge: no report given") }
        for report in reports.dropFirst() {
            let (a, b) = (merged.machine, report.machine)
            guard a.replicaRevision == b.replicaRevision, a.mode == b.mode, a.cpuModel == b.cpuModel,
                  a.processors == b.processors else {
                throw BenchmarkError("merge: reports of different runs (Replica \(a.replicaRevision), \(a.mode), \(a.processors) × "
                                     + "\(a.cpuModel) vs Replica \(b.replicaRevision), \(b.mode), \(b.processors) × \(b.cpuModel))")
            }
            merged.rows += report.rows
            merged.machine.date = min(a.date, b.date)
            merged.command = [merged.command, report.command].compactMap { $0 }.joined(separator: "; ")
            merged.seconds = (merged.seconds ?? 0) + (report.seconds ?? 0)
        }
        return merged
    }

    /// The root README's summary: the run's command, commit and machine; the import passes of both
    /// shapes against every baseline; and every other row that has a target, with its checks.
    func summaryMarkdown() -> String {
        var lines: [String] = []
        lines.append("Last run: `\(command ?? "replica-bench")`"
                     + (seconds.map { String(format: " (%.0f min)", ($0 / 60).rounded(.up)) } ?? "")
                     + ", Replica \(machine.replicaRevision), \(machine.date), mode \(machine.mode), on "
                     + "\(machine.processors) cores, \(machine.cpuModel), \(machine.memory) RAM, \(machine.system), "
                     + "SQLite \(machine.sqliteVersion). Generated by `replica-bench readme` from that run's JSON report; "
                     + "the whole table with its footnotes is in [Benchmarks/README.md](Benchmarks/README.md#last-run).")
        if let table = importSummary() {
            lines.append("")
            lines += table
        }
        let others = rows.filter { row in
            !ImportShape.allCases.contains { row.workload.hasPrefix($0.title + ",") || row.workload.hasPrefix($0.title + " ") }
                && (!Self.checks(row).isEmpty || row.replica.value == nil)
        }
        if !others.isEmpty {
            lines.append("")
            lines.append("| workload | Replica | targets |")
            lines.append("|---|---|---|")
            for row in others {
                let checks = Self.checks(row)
                lines.append("| \(row.workload) (\(row.unit)) | \(Self.format(row.replica, unit: row.unit)) | "
                             + (checks.isEmpty ? "—" : checks.joined(separator: "<br>")) + " |")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The import table: one column per shape, passes 1 / 2 / 3 in each cell.
    private func importSummary() -> [String]? {
        let shapes = ImportShape.allCases.map { shape in
            (shape, ImportWorkload.passes.map { pass in rows.first { $0.workload == "\(shape.title), \(pass.label)" } })
        }.filter { !$0.1.allSatisfy { $0 == nil } }
        guard !shapes.isEmpty else { return nil }
        func cell(_ passRows: [ResultRow?], _ text: (ResultRow) -> String) -> String {
            passRows.map { $0.map(text) ?? "—" }.joined(separator: " / ")
        }
        var lines = ["| import, rows/s | " + shapes.map { "\($0.0.rawValue) pass 1 / 2 / 3" }.joined(separator: " | ") + " |",
                     "|---|" + shapes.map { _ in "---|" }.joined()]
        lines.append("| Replica, route with stale deletion | "
                     + shapes.map { cell($0.1) { Self.format($0.replica) } }
                         .joined(separator: " | ") + " |")
        var baselines: [(name: String, minimum: Double?)] = []
        for row in shapes.flatMap({ $0.1.compactMap { $0 } }) {
            for baseline in row.baselines where !baselines.contains(where: { $0.name == baseline.name }) {
                baselines.append((baseline.name, baseline.minimumRatio))
            }
        }
        for baseline in baselines {
            let target = baseline.minimum.map { " (≥ \(Self.formatTargetRatio($0)))" } ?? ""
            lines.append("| \(baseline.name): rows/s, Replica ÷ it\(target) | " + shapes.map { cell($0.1) { row in
                guard let found = row.baselines.first(where: { $0.name == baseline.name }) else { return "—" }
                guard let value = found.cell.value else { return found.cell.note ?? "—" }
                guard let replica = row.replica.value, value > 0 else { return Self.formatNumber(value) }
                let ratio = replica / value
                let mark = found.minimumRatio.map { ratio >= $0 ? " ✅" : " ❌" } ?? ""
                return "\(Self.formatNumber(value)), \(Self.formatRatio(ratio))\(mark)"
            } }.joined(separator: " | ") + " |")
        }
        lines.append("| peak RSS, Replica (route) | " + shapes.map { shape in
            shape.1.lazy.compactMap { $0?.peakMemory.first { $0.name == "Replica" } }.first.map { memory in
                Self.formatBytes(memory.bytes)
                    + (memory.limit.map { " (≤ \(Self.formatBytes($0)) \(memory.bytes <= $0 ? "✅" : "❌"))" } ?? "")
            } ?? "—"
        }.joined(separator: " | ") + " |")
        return lines
    }

    /// A row's checked targets: ratios with a minimum, memory with a limit, other targets.
    static func checks(_ row: ResultRow) -> [String] {
        var checks: [String] = []
        if let replica = row.replica.value {
            for baseline in row.baselines {
                guard let minimum = baseline.minimumRatio, let value = baseline.cell.value, value > 0 else { continue }
                let ratio = replica / value
                checks.append("÷ \(baseline.name) \(formatRatio(ratio)) (≥ \(formatTargetRatio(minimum)) \(ratio >= minimum ? "✅" : "❌"))")
            }
        }
        checks += row.peakMemory.filter { $0.limit != nil }.map(format)
        checks += row.targets.map(format)
        return checks
    }
}
