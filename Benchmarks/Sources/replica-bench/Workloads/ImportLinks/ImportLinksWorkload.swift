import CFloor
import Foundation

/// `import-links`: the join-table path (issue 28). Issues, each nesting three labels shared
/// with many other issues, from a JSON file to committed rows in three tables (`issues`,
/// `labels`, the join table `issue_labels`), Replica against the C floor doing the same inserts.
///
/// The parent writes two seeded files (``ImportLinksData``: the second replaces one label of
/// every issue and flips the state of every other issue), then runs each implementation in its
/// own child process, three passes each, as `import` does:
/// 1. the first file into an empty database (issues, the distinct labels and every link inserted),
/// 2. the second file (every issue's links change),
/// 3. the second file again (nothing changes).
///
/// Each child reports its pass times, the changes per entity (as Replica reports them: an issue
/// whose links changed is updated, and so is every label linked or unlinked) and a checksum of the
/// three tables; the parent reads the child's peak memory from `wait4`.
struct ImportLinksWorkload: Workload {
    let name = "import-links"
    let summary = "JSON file → committed SQLite rows through a join table, issues/s (3 shared labels nested in each): "
        + "Replica (route) vs C floor"

    enum Implementation: String, CaseIterable, Codable, Sendable {
        case replica
        case cFloor = "c-floor"

        var displayName: String { self == .replica ? "Replica" : "C floor" }
    }

    /// The three passes: key, label, file (0 or 1), whether every issue changes.
    static let passes: [(key: String, label: String, file: Int, changesAll: Bool)] = [
        ("pass1", "pass 1: insert into empty store", 0, true),
        ("pass2", "pass 2: one label of every issue replaced", 1, true),
        ("pass3", "pass 3: unchanged data", 1, false),
    ]

    /// What every implementation must report per pass.
    struct Expected: Codable, Sendable {
        var issues: [String: Int] = [:]
        var labels: [String: Int] = [:]
        var linksInserted: [String: Int] = [:]
        var linksDeleted: [String: Int] = [:]
    }

    struct Measurements {
        var count = 0
        var bytes = 0
        var runs = 0
        var seconds: [Implementation: [String: [Double]]] = [:]
        var peaks: [Implementation: Int] = [:]
        var failures: [Implementation: String] = [:]
        var problems: [String] = []
        var checksums: [Implementation: String] = [:]
        var floorCounts: [String: Int] = [:]
    }

    func run(in context: BenchmarkContext) async throws -> [ResultRow] {
        var m = Measurements()
        m.count = context.quick ? 100_000 : 1_000_000
        m.runs = context.runs ?? 3
        let files = [0, 1].map { (context.scratchDirectory as NSString).appendingPathComponent("links-\($0).json") }
        let clock = ContinuousClock()
        let start = clock.now
        for (revision, path) in files.enumerated() {
            m.bytes = try ImportLinksData(count: m.count, revision: revision).writeJSON(to: path)
        }
        let expected = Self.expected(count: m.count)
        context.log(String(format: "import-links: wrote 2 files of %@ issues, %.1f MB each, in %.1f s (labels: %@ in the first file, "
                           + "%@ relinked by the second)", Report.formatCount(m.count), Double(m.bytes) / 1e6,
                           start.duration(to: clock.now).seconds, Report.formatCount(expected.labels["pass1"] ?? 0),
                           Report.formatCount(expected.labels["pass2"] ?? 0)))

        for run in 1...m.runs {
            for implementation in Implementation.allCases where m.failures[implementation] == nil {
                context.log("import-links: run \(run)/\(m.runs), \(implementation.displayName)…")
                do {
                    let directory = (context.scratchDirectory as NSString).appendingPathComponent("db-links-\(implementation.rawValue)")
                    let request = WorkerRequest(implementation: implementation.rawValue, parameters: [
                        "first": files[0], "second": files[1], "count": String(m.count), "directory": directory,
                    ])
                    let (reply, peak) = try context.runWorker(workload: name, request: request)
                    record(reply, peak: peak, of: implementation, expected: expected, into: &m)
                    let times = Self.passes.compactMap { reply.seconds[$0.key] }.map { String(format: "%.2f s", $0) }
                    context.log("import-links: \(implementation.displayName): \(times.joined(separator: ", ")), "
                                + "peak \(Report.formatBytes(peak))" + (reply.checksum.map { "; stored \($0)" } ?? ""))
                } catch {
                    context.log("import-links: \(implementation.displayName) failed: \(error)")
                    m.failures[implementation] = "failed: \(error)"
                }
            }
        }
        if let floor = m.checksums[.cFloor], let replica = m.checksums[.replica], floor != replica {
            m.problems.append("Replica stored different data: \(replica) vs the C floor's \(floor)")
        }
        m.problems.forEach { context.log("import-links: PROBLEM: \($0)") }
        return Self.rows(m, quick: context.quick)
    }

    /// The change counts every pass must report, from the generator.
    static func expected(count: Int) -> Expected {
        var expected = Expected()
        let labels = ImportLinksData(count: count, revision: 0).distinctLabels().count
        let links = count * ImportLinksData.linksPerIssue
        expected.issues = ["pass1": count, "pass2": count, "pass3": 0]
        expected.labels = ["pass1": labels, "pass2": ImportLinksData.relinkedLabels(count: count), "pass3": 0]
        expected.linksInserted = ["pass1": links, "pass2": count, "pass3": 0]
        expected.linksDeleted = ["pass1": 0, "pass2": count, "pass3": 0]
        return expected
    }

    /// Adds one child's reply, checking its change counts.
    private func record(_ reply: WorkerReply, peak: Int, of implementation: Implementation, expected: Expected,
                        into m: inout Measurements) {
        let name = implementation.displayName
        for (key, value) in reply.seconds { m.seconds[implementation, default: [:]][key, default: []].append(value) }
        for pass in Self.passes {
            let checks: [(String, [String: Int])] = [("issues", expected.issues), ("labels", expected.labels)]
                + (implementation == .cFloor ? [("linksInserted", expected.linksInserted), ("linksDeleted", expected.linksDeleted)] : [])
            for (what, counts) in checks {
                let found = reply.counts["\(pass.key).\(what)"] ?? -1, wanted = counts[pass.key] ?? 0
                if found != wanted { m.problems.append("\(name) \(pass.key): \(what) \(found), expected \(wanted)") }
            }
            if let deleted = reply.counts["\(pass.key).deleted"], deleted != 0 {
                m.problems.append("\(name) \(pass.key): deleted \(deleted) rows, none is stale")
            }
        }
        if implementation == .cFloor {
            for (key, value) in reply.counts where key.contains(".n.") { m.floorCounts[key] = value }
            for (key, _) in reply.counts where key.contains(".mismatch.") {
                m.problems.append("C floor: strategy \(key) left different tables than upsert-differs")
            }
        }
        m.peaks[implementation] = max(m.peaks[implementation] ?? 0, peak)
        if let checksum = reply.checksum { m.checksums[implementation] = checksum }
    }

    func runWorker(_ request: WorkerRequest) async throws -> WorkerReply {
        guard let implementation = Implementation(rawValue: request.implementation) else {
            throw BenchmarkError("unknown import-links implementation '\(request.implementation)'")
        }
        let files = [try request.require("first"), try request.require("second")]
        guard let count = Int(try request.require("count")) else { throw BenchmarkError("bad count") }
        let directory = try request.require("directory")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let expected = Self.expected(count: count)
        switch implementation {
        case .cFloor:
            return try LinksFloorImporter.run(count: count, directory: directory, passes: Self.passes.map {
                (key: $0.key, revision: $0.file, issues: expected.issues[$0.key] ?? 0, labels: expected.labels[$0.key] ?? 0)
            })
        case .replica:
            let database = (directory as NSString).appendingPathComponent("bench.sqlite")
            var reply = try await LinksReplicaImporter.run(database: database,
                                                           passes: Self.passes.map { ($0.key, files[$0.file]) })
            try LinksFloorImporter.checkLayout(database: database)
            reply.checksum = try LinksFloorImporter.checksum(database: database)
            return reply
        }
    }
}

// MARK: - Report rows

extension ImportLinksWorkload {
    static func rows(_ m: Measurements, quick: Bool) -> [ResultRow] {
        let title = "import-links (\(Report.formatCount(m.count)) issues × 3 shared labels)"
        let problems = m.problems.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            .map { "import-links: PROBLEM: \($0)" }
        func cell(_ implementation: Implementation, _ key: String) -> Cell {
            if let failure = m.failures[implementation] { return Cell(note: failure) }
            guard let time = median(m.seconds[implementation]?[key] ?? []), time > 0 else { return Cell(note: "—") }
            return Cell(Double(m.count) / time)
        }
        let description = String(format: "import-links: %@ issues, %.0f MB of JSON per file, each issue nesting 3 of 1,000 "
                                 + "shared labels in full; ", Report.formatCount(m.count), Double(m.bytes) / 1e6)
            + (m.runs > 1 ? "median of \(m.runs) runs" : "one run")
            + "; rates are issues/s (each issue is 1 issue row, 3 label upserts and its links); Replica imports through "
            + "the schema's `GET /issues` route, which deletes stale issues (none is stale); the C floor upserts each "
            + "distinct label once, then each issue and its links (read the stored ones, delete the unlisted, insert the "
            + "new), values in memory before timing starts; each implementation runs all three passes in one child "
            + "process, whose peak RSS is shown (wait4 ru_maxrss)."
        var rows: [ResultRow] = []
        var replicaRates: [String: Double] = [:]
        for pass in passes {
            let replica = cell(.replica, pass.key)
            replicaRates[pass.key] = replica.value
            var row = ResultRow(workload: "\(title), \(pass.label)", unit: "issues/s", replica: replica)
            let floor = floorSummary(m, pass: pass.key)
            row.baselines = [BaselineCell(name: "C floor", cell: m.failures[.cFloor] == nil ? floor.cell : cell(.cFloor, pass.key))]
            if pass.key == "pass1" {
                row.peakMemory = Implementation.allCases.compactMap { implementation in
                    m.peaks[implementation].map { MemoryReading(name: implementation.displayName, bytes: $0) }
                }
            }
            if pass.key == "pass3" {
                let changed = m.problems.contains { $0.hasPrefix("Replica pass3") }
                let first = replicaRates["pass1"], unchanged = replica.value
                row.targets = [
                    Target(description: "0 changes", met: m.failures[.replica] == nil ? !changed : nil),
                    Target(description: "≥ pass 1 rate", met: first.flatMap { first in unchanged.map { $0 >= first } }),
                ]
            }
            row.notes = [description, floor.note] + problems
            rows.append(row)
        }
        return rows
    }

    /// The C floor's cell for one pass (the fastest valid strategy, named) and a note listing every strategy.
    private static func floorSummary(_ m: Measurements, pass: String) -> (cell: Cell, note: String) {
        var rates: [(name: String, rate: Double)] = []
        var invalid: [String] = []
        for strategy in LinksFloorImporter.strategies {
            let name = LinksFloorImporter.name(strategy)
            let times = m.seconds[.cFloor]?["\(pass).s.\(name)"] ?? []
            if times.count == m.runs, let time = median(times), time > 0 {
                rates.append((name, Double(m.count) / time))
            } else if let changes = m.floorCounts["\(pass).n.\(name)"] {
                invalid.append(changes < 0 ? "\(name) (SQLite error)" : "\(name) (wrong change counts)")
            } else {
                invalid.append("\(name) (not run)")
            }
        }
        rates.sort { $0.rate > $1.rate }
        let cell = rates.first.map { Cell($0.rate, note: $0.name) } ?? Cell(note: "no valid strategy")
        let note = "import-links, C floor \(pass.replacingOccurrences(of: "pass", with: "pass ")) (issues/s, each strategy "
            + "from the same database state): " + rates.map { "\($0.name) \(Report.formatNumber($0.rate))" }.joined(separator: ", ")
            + (invalid.isEmpty ? "" : "; not valid for this pass: " + invalid.joined(separator: ", "))
        return (cell, note)
    }
}
