import CFloor
import Foundation

/// The report rows of one shape of the `import` workload.
extension ImportWorkload {
    static func rows(_ shape: ImportShape, _ m: Measurements, quick: Bool) -> [ResultRow] {
        let limit = quick ? nil : memoryLimit
        let problems = m.problems.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            .map { "import \(shape.rawValue): PROBLEM: \($0)" }

        func cell(_ implementation: Implementation, _ key: String) -> Cell {
            if let failure = m.failures[implementation] { return Cell(note: failure) }
            guard let time = median(m.seconds[implementation]?[key] ?? []), time > 0 else { return Cell(note: "—") }
            return Cell(Double(m.count) / time)
        }
        func peak(_ implementation: Implementation, limited: Bool) -> MemoryReading? {
            m.peaks[implementation].map {
                MemoryReading(name: implementation.displayName, bytes: $0, limit: limited ? limit : nil)
            }
        }

        let description = String(format: "%@: %@ objects, %.0f MB of JSON per file; ", shape.title,
                                 Report.formatCount(m.count), Double(m.bytes) / 1e6)
            + (m.runs > 1 ? "median of \(m.runs) runs" : "one run")
            + (m.sqliteUtilsRuns != m.runs ? " (sqlite-utils: \(m.sqliteUtilsRuns == 1 ? "one run" : "median of \(m.sqliteUtilsRuns) runs"), "
               + "about 20 s a pass at a million rows; `--runs` sets it too)" : "")
            + "; Replica imports through the schema's `GET \(shape.route)` route, which deletes stale rows (nothing is "
            + "stale in any pass); `Replica by entity` is the same `importFile` with `.entity(\"\(shape.entity)\")` (no "
            + "stale deletion); each implementation runs all three passes in one child process, whose peak RSS is shown "
            + "(wait4 ru_maxrss); the C floor's values are in memory before timing starts."

        var rows: [ResultRow] = []
        var replicaRates: [String: Double] = [:]
        for pass in passes {
            let replica = cell(.replica, pass.key)
            replicaRates[pass.key] = replica.value
            var row = ResultRow(workload: "\(shape.title), \(pass.label)", unit: "rows/s", replica: replica)
            let floor = floorSummary(shape, m, pass: pass.key)
            for implementation in [Implementation.cFloor, .python, .sqliteUtils, .sqliteShell, .duckDB, .foundationGRDB, .replicaEntity]
            where implementation.runs(shape) {
                let value = implementation == .cFloor && m.failures[.cFloor] == nil ? floor.cell : cell(implementation, pass.key)
                row.baselines.append(BaselineCell(name: implementation.displayName, cell: value,
                                                  minimumRatio: implementation.minimumRatio))
            }
            row.peakMemory = [peak(.replica, limited: true)].compactMap { $0 }
            if pass.key == "pass1" {
                row.peakMemory += [Implementation.cFloor, .python, .sqliteUtils, .sqliteShell, .duckDB, .foundationGRDB]
                    .compactMap { peak($0, limited: false) }
                row.peakMemory += [peak(.replicaEntity, limited: true)].compactMap { $0 }
            }
            if pass.key == "pass3" {
                let replicaChanges = !m.problems.contains { $0.hasPrefix("\(shape.rawValue): Replica pass3") }
                let first = replicaRates["pass1"], unchanged = replica.value
                row.targets = [
                    Target(description: "0 changes", met: m.failures[.replica] == nil ? replicaChanges : nil),
                    Target(description: "≥ pass 1 rate", met: first.flatMap { first in unchanged.map { $0 >= first } }),
                ]
            }
            row.notes = [description, floor.note, otherToolsNote(shape, m)] + problems
            rows.append(row)
        }

        let variants: [(Implementation, String, String)] = [
            (.replicaStdin, "from standard input",
             "\(shape.title) from standard input: a child whose standard input is a pipe that `cat FILE` writes into "
             + "calls `importFile(\"-\", into: .route(.get, \"\(shape.route)\"))`, as `cat FILE | replica import --route "
             + "\(shape.route) -` does; `importFile` is the file itself in the same run (the Replica column above)."),
            (.replicaChunks, "through sync(chunks:)",
             "\(shape.title) through `sync(chunks:)`: `SQLiteReplica.sync(.get, \"\(shape.route)\", chunks:)` with an "
             + "`AsyncStream` of 64 KiB chunks read from the file as it asks for them, written as they arrive "
             + "(`SyncOptions.streamingPatience` 0.1 s); "
             + (m.stagedAfterPause == 0 ? "no pass paused long enough to be staged instead"
                : "\(m.stagedAfterPause) of \(m.runs * passes.count) passes paused and were staged instead")
             + "; `importFile` is the file itself in the same run."),
        ]
        for (implementation, label, note) in variants {
            for pass in passes {
                var row = ResultRow(workload: "\(shape.title) \(label), \(pass.label)", unit: "rows/s",
                                    replica: cell(implementation, pass.key))
                row.baselines = [BaselineCell(name: "importFile", cell: cell(.replica, pass.key))]
                row.peakMemory = [peak(implementation, limited: true)].compactMap { $0 }
                row.notes = [note] + problems
                rows.append(row)
            }
        }

        var parser = ResultRow(workload: "\(shape.title): parser alone, no SQLite", unit: "MB/s",
                               replica: m.failures[.replicaParse].map { Cell(note: $0) }
                                   ?? Cell(median(m.parseRates).map { $0 / 1e6 }))
        parser.peakMemory = [peak(.replicaParse, limited: true)].compactMap { $0 }
        if shape == .items {
            parser.targets = [Target(description: "≥ 500 MB/s",
                                     met: median(m.parseRates).map { $0 >= parserTarget })]
        }
        parser.notes = ["\(shape.title): parser alone: `SQLiteReplica.validateFile(path, into: .route(.get, \"\(shape.route)\"))` "
                        + "reads the file in 64 KiB chunks, parses it and maps every object to its row as an import "
                        + "does, and writes nothing (no transaction); MB/s of JSON, median of every parse (3 per run)."]
            + problems
        rows.append(parser)
        return rows
    }

    /// What the tools users would pick instead did and stored, where it differs from Replica's table.
    private static func otherToolsNote(_ shape: ImportShape, _ m: Measurements) -> String {
        let layout: String
        let changed = shape == .items ? "age" : "numberOfKids"
        switch shape {
        case .items:
            layout = "sqlite-utils makes its own table from the JSON keys: `created_at` TEXT (the ISO 8601 string) instead "
                + "of `createdAt` REAL Unix seconds, `id INTEGER PRIMARY KEY` without NOT NULL; the sqlite3 shell stores "
                + "Replica's table and values exactly (dates through `unixepoch()`); DuckDB's `read_json_auto` types: "
                + "`id`/`age` BIGINT, `score` DOUBLE, `active` BOOLEAN, `created_at` TIMESTAMP WITH TIME ZONE"
        case .people:
            layout = "`avatar` stays base64 TEXT in all three (sqlite-utils decodes base64 only from "
                + "`{\"$base64\": true, …}` objects, SQLite 3.40 has no `unhex()` or base64 function, DuckDB reads it as "
                + "VARCHAR) where Replica stores the decoded BLOB; sqlite-utils' `id INTEGER PRIMARY KEY` lacks NOT NULL; "
                + "DuckDB's types: `id`/`numberOfKids` BIGINT, `kilometersWalked` DOUBLE, `name` VARCHAR"
        }
        func changes(_ implementation: Implementation) -> String {
            let counts = passes.map { pass in
                (m.changeCounts[implementation]?[pass.key]).map(Report.formatCount) ?? "?"
            }
            return counts.joined(separator: " / ")
        }
        return "\(shape.title), the tools users would pick instead, each in its own child process (peak RSS from wait4 "
            + "covers the tools it starts), every pass timed as its user runs it: **sqlite-utils** "
            + "`sqlite-utils insert DB \(shape.table) FILE --pk id` (pass 1) and `sqlite-utils upsert …` (passes 2 and 3), "
            + "each a process of its own timed from start to exit, into a database made untimed by `sqlite-utils "
            + "create-database --enable-wal`; it commits every \(999 / shape.columns.count) rows (999 SQL variables ÷ "
            + "\(shape.columns.count) columns; `--batch-size` cannot raise it), reports no change count and rewrites every "
            + "row on pass 3; **sqlite3 json_each**: `sqlite3 DB \"INSERT INTO \(shape.table) (…) SELECT value->>'id', … "
            + "FROM json_each(readfile('FILE'))\"`, a plain insert on pass 1 and the where-differs upsert (`ON CONFLICT "
            + "(id) DO UPDATE SET … WHERE … IS NOT excluded.…`) on passes 2 and 3, one shell process per pass timed from "
            + "start to exit, in a WAL database with `synchronous = NORMAL` holding Replica's table (made untimed); "
            + "changes reported \(changes(.sqliteShell)); **DuckDB** (the `duckdb` Python package, a DuckDB file opened "
            + "untimed, both cores): `CREATE TABLE \(shape.table) AS SELECT * FROM read_json_auto(FILE)` then `ALTER "
            + "TABLE … ADD PRIMARY KEY (id)` on pass 1 (both timed), `INSERT INTO … SELECT * FROM read_json_auto(FILE) "
            + "ON CONFLICT (id) DO UPDATE SET … WHERE … IS DISTINCT FROM excluded.…` on passes 2 and 3; changes reported "
            + "\(changes(.duckDB)). Their tables are not Replica's: \(layout). Each is checked on its row count and the "
            + "sums of `id` and `\(changed)` against Replica's table."
            + (m.otherToolsChecked.isEmpty ? "" : " Agreed: \(m.otherToolsChecked.joined(separator: ", ")).")
    }

    /// The C floor's cell for one pass (the fastest strategy's median, its name beside it) and a
    /// note listing every strategy.
    private static func floorSummary(_ shape: ImportShape, _ m: Measurements, pass: String) -> (cell: Cell, note: String) {
        var rates: [(name: String, rate: Double)] = []
        var invalid: [String] = []
        let expected = pass == "pass3" ? 0 : m.count
        for strategy in CFloorImporter.strategies {
            let name = CFloorImporter.name(strategy)
            let times = m.seconds[.cFloor]?["\(pass).s.\(name)"] ?? []
            if times.count == m.runs, let time = median(times), time > 0 {
                rates.append((name, Double(m.count) / time))
            } else {
                if let changes = m.floorCounts["\(pass).n.\(name)"] {
                    invalid.append(changes < 0 ? "\(name) (SQLite error)"
                                   : "\(name) (\(Report.formatCount(changes)) changes, expected \(Report.formatCount(expected)))")
                } else {
                    invalid.append("\(name) (not run)")
                }
            }
        }
        rates.sort { $0.rate > $1.rate }
        let cell = rates.first.map { Cell($0.rate, note: $0.name) } ?? Cell(note: "no valid strategy")
        let passName = pass.replacingOccurrences(of: "pass", with: "pass ")
        let note = "\(shape.title), C floor \(passName) (rows/s, each strategy from the same database state): "
            + rates.map { "\($0.name) \(Report.formatNumber($0.rate))" }.joined(separator: ", ")
            + (invalid.isEmpty ? "" : "; not valid for this pass: " + invalid.joined(separator: ", "))
        return (cell, note)
    }
}
