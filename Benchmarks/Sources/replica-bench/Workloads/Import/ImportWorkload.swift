import CFloor
import Foundation

/// `import`: JSON file to committed SQLite rows, rows/s, for Replica and its baselines, on two
/// data shapes (``ImportShape``: 8-field items, 5-attribute people).
///
/// For each shape the parent writes two seeded JSON files (the second changes every object),
/// then runs each implementation in its own child process, three passes each:
/// 1. the first file into an empty database (every row inserted),
/// 2. the second file (every row updated),
/// 3. the second file again (nothing changes).
///
/// Replica imports through the shape's route, which deletes stale rows (nothing is stale in
/// any pass); it also runs by entity, from standard input, through `sync(chunks:)`, and parsing
/// alone. The C floor gets the values already in memory and keeps its fastest valid strategy per
/// pass; the others read the file. Each child reports its pass times, change counts and a
/// checksum of the stored rows; the parent reads the child's peak memory from `wait4`.
struct ImportWorkload: Workload {
    let name = "import"
    let summary = "JSON file → committed SQLite rows, rows/s, 8-field items and people: Replica (route with stale deletion, "
        + "by entity, stdin, sync(chunks:), parser alone) vs C floor, Python, sqlite-utils, sqlite3 json_each, DuckDB, "
        + "Foundation+GRDB"

    /// Replica's peak memory target on the full file.
    static let memoryLimit = 100_000_000
    /// The parser's target on the 8-field file, bytes/s.
    static let parserTarget = 500e6

    /// The implementations, in the order each run starts them.
    enum Implementation: String, CaseIterable, Codable, Sendable {
        /// Replica through the shape's route (stale deletion on): the table's Replica column.
        case replica
        case replicaEntity = "replica-entity"
        case replicaStdin = "replica-stdin"
        case replicaChunks = "replica-chunks"
        case replicaParse = "replica-parse"
        case cFloor = "c-floor"
        case python
        /// `sqlite-utils insert` / `upsert` (the benchmark's virtual environment).
        case sqliteUtils = "sqlite-utils"
        /// SQLite's `json_each` through the `sqlite3` shell.
        case sqliteShell = "sqlite3-shell"
        /// DuckDB's `read_json_auto` (the `duckdb` package of the benchmark's virtual environment).
        case duckDB = "duckdb"
        case foundationGRDB = "foundation-grdb"

        var displayName: String {
            switch self {
            case .replica: "Replica"
            case .replicaEntity: "Replica by entity"
            case .replicaStdin: "Replica from stdin"
            case .replicaChunks: "Replica sync(chunks:)"
            case .replicaParse: "Replica parser"
            case .cFloor: "C floor"
            case .python: "Python"
            case .sqliteUtils: "sqlite-utils"
            case .sqliteShell: "sqlite3 json_each"
            case .duckDB: "DuckDB"
            case .foundationGRDB: "Foundation+GRDB"
            }
        }

        /// How Replica is called, for Replica's variants.
        var replicaMode: ReplicaImporter.Mode? {
            switch self {
            case .replica: .route
            case .replicaEntity: .entity
            case .replicaStdin: .stdin
            case .replicaChunks: .chunks
            case .replicaParse: .parse
            default: nil
            }
        }

        /// The tools users would pick instead (issue 31): their tables are not Replica's, so they
        /// are compared on ``ImportShape/countsSQL``, not the whole checksum.
        var isOtherTool: Bool {
            [.sqliteUtils, .sqliteShell, .duckDB].contains(self)
        }

        /// Foundation+GRDB decodes the 8-field `Item` only.
        func runs(_ shape: ImportShape) -> Bool {
            self != .foundationGRDB || shape == .items
        }

        /// The least `Replica ÷ this` the project aims for, on every pass.
        var minimumRatio: Double? {
            switch self {
            case .cFloor: 0.8
            // Ahead of every tool a user would pick instead, on every pass (issue 31).
            case .python, .sqliteUtils, .sqliteShell, .duckDB: 1
            // The route with stale deletion against the same import by entity, nothing stale.
            case .replicaEntity: 0.95
            default: nil
            }
        }
    }

    /// The three passes: key, label, file (0 or 1), whether every row changes.
    static let passes: [(key: String, label: String, file: Int, changesAll: Bool)] = [
        ("pass1", "pass 1: insert into empty store", 0, true),
        ("pass2", "pass 2: update every row", 1, true),
        ("pass3", "pass 3: unchanged data", 1, false),
    ]

    /// What one shape's runs measured.
    struct Measurements {
        var count = 0
        var bytes = 0
        var runs = 0
        /// sqlite-utils' runs (about 20 s a pass at a million rows): 1 unless `--runs` says otherwise.
        var sqliteUtilsRuns = 0
        /// Seconds per implementation and reply key (`pass1`, C floor `pass1.s.insert`), one per run.
        var seconds: [Implementation: [String: [Double]]] = [:]
        /// Parser rates (bytes/s), one per parse.
        var parseRates: [Double] = []
        var peaks: [Implementation: Int] = [:]
        var failures: [Implementation: String] = [:]
        var problems: [String] = []
        var checksums: [Implementation: String] = [:]
        /// The C floor's change counts per strategy (`pass1.n.upsert`), last run.
        var floorCounts: [String: Int] = [:]
        /// Change counts the other tools reported, by pass key (the last run's).
        var changeCounts: [Implementation: [String: Int]] = [:]
        /// The other tools whose row count and sums agreed with the reference's.
        var otherToolsChecked: [String] = []
        /// The `sync(chunks:)` passes that paused and were staged instead (`SyncResult.stagedAfterPause`).
        var stagedAfterPause = 0
    }

    func run(in context: BenchmarkContext) async throws -> [ResultRow] {
        var rows: [ResultRow] = []
        let tools = CompetitorTools.prepare(context)
        for shape in ImportShape.allCases {
            let measurements = try await measure(shape, tools: tools, context: context)
            rows += Self.rows(shape, measurements, quick: context.quick)
        }
        return rows
    }

    /// Writes the shape's files and runs every implementation `runs` times.
    private func measure(_ shape: ImportShape, tools: CompetitorTools, context: BenchmarkContext) async throws -> Measurements {
        var m = Measurements()
        m.count = context.quick ? 100_000 : 1_000_000
        m.runs = context.runs ?? 3
        m.sqliteUtilsRuns = context.runs ?? 1
        m.failures = tools.missing
        let files = [0, 1].map { shape.file(revision: $0, in: context.scratchDirectory) }
        let clock = ContinuousClock()
        let start = clock.now
        for (revision, path) in files.enumerated() {
            m.bytes = try shape.writeJSON(count: m.count, revision: revision, to: path)
        }
        // import-live reuses the first items file.
        if shape == .items { markGeneratedItemsFile(count: m.count, context: context) }
        context.log(String(format: "import %@: wrote 2 files of %@ objects, %.1f MB each, in %.1f s", shape.rawValue,
                           Report.formatCount(m.count), Double(m.bytes) / 1e6, start.duration(to: clock.now).seconds))

        for run in 1...m.runs {
            for implementation in Implementation.allCases where implementation.runs(shape) && m.failures[implementation] == nil {
                if implementation == .sqliteUtils && run > m.sqliteUtilsRuns { continue }
                if implementation == .python && context.python == nil {
                    m.failures[implementation] = "no python3"
                    continue
                }
                context.log("import \(shape.rawValue): run \(run)/\(m.runs), \(implementation.displayName)…")
                do {
                    let (reply, peak) = try runImplementation(implementation, shape: shape, files: files, count: m.count,
                                                              tools: tools, context: context)
                    record(reply, peak: peak, of: implementation, shape: shape, into: &m)
                    let times = Self.passes.compactMap { reply.seconds[$0.key] }.map { String(format: "%.2f s", $0) }
                    context.log("import \(shape.rawValue): \(implementation.displayName): \(times.joined(separator: ", ")), "
                                + "peak \(Report.formatBytes(peak))" + (reply.checksum.map { "; stored \($0)" } ?? ""))
                } catch {
                    context.log("import \(shape.rawValue): \(implementation.displayName) failed: \(error)")
                    m.failures[implementation] = "failed: \(error)"
                }
            }
        }

        if let reference = m.checksums[.cFloor] ?? m.checksums[.replica]
            ?? m.checksums.first(where: { !$0.key.isOtherTool })?.value {
            let referenceTokens = Set(reference.split(separator: " "))
            for (implementation, checksum) in m.checksums.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                // The other tools' tables differ in layout: their row count and integer sums must be Replica's.
                let agrees = implementation.isOtherTool
                    ? Set(checksum.split(separator: " ")).isSubset(of: referenceTokens) : checksum == reference
                if implementation.isOtherTool && agrees { m.otherToolsChecked.append("\(implementation.displayName) (\(checksum))") }
                if !agrees {
                    m.problems.append("\(implementation.displayName) stored different data: \(checksum) vs \(reference)")
                }
            }
        }
        m.problems.forEach { context.log("import \(shape.rawValue): PROBLEM: \($0)") }
        return m
    }

    /// Adds one child's reply to the measurements, checking its change counts.
    private func record(_ reply: WorkerReply, peak: Int, of implementation: Implementation, shape: ImportShape,
                        into m: inout Measurements) {
        let name = "\(shape.rawValue): \(implementation.displayName)"
        for (key, value) in reply.seconds {
            m.seconds[implementation, default: [:]][key, default: []].append(value)
        }
        for pass in Self.passes {
            if implementation == .replicaParse {
                let objects = reply.counts["\(pass.key).objects"] ?? -1
                if objects != m.count { m.problems.append("\(name) \(pass.key): \(objects) objects read, expected \(m.count)") }
                if let bytes = reply.counts["\(pass.key).bytes"], let seconds = reply.seconds[pass.key], seconds > 0 {
                    m.parseRates.append(Double(bytes) / seconds)
                }
                continue
            }
            if implementation == .replicaChunks { m.stagedAfterPause += reply.counts["\(pass.key).stagedAfterPause"] ?? 0 }
            // sqlite-utils reports no change count; the other tools' counts are checked when they report one.
            if implementation.isOtherTool {
                guard let changes = reply.counts["\(pass.key).changes"] else { continue }
                m.changeCounts[implementation, default: [:]][pass.key] = changes
            }
            let changes = reply.counts["\(pass.key).changes"] ?? -1
            let expected = pass.changesAll ? m.count : 0
            if changes != expected { m.problems.append("\(name) \(pass.key): \(changes) changes, expected \(expected)") }
            if let deleted = reply.counts["\(pass.key).deleted"], deleted != 0 {
                m.problems.append("\(name) \(pass.key): deleted \(deleted) rows, none is stale")
            }
        }
        if implementation == .cFloor {
            for (key, value) in reply.counts where key.contains(".n.") { m.floorCounts[key] = value }
            for (key, _) in reply.counts where key.contains(".mismatch.") {
                m.problems.append("\(name): strategy \(key) left a different table than upsert-differs")
            }
        }
        m.peaks[implementation] = max(m.peaks[implementation] ?? 0, peak)
        if let checksum = reply.checksum { m.checksums[implementation] = checksum }
    }

    func runWorker(_ request: WorkerRequest) async throws -> WorkerReply {
        guard let implementation = Implementation(rawValue: request.implementation) else {
            throw BenchmarkError("unknown import implementation '\(request.implementation)'")
        }
        guard let shape = ImportShape(rawValue: try request.require("shape")) else { throw BenchmarkError("bad shape") }
        let files = [try request.require("first"), try request.require("second")]
        guard let count = Int(try request.require("count")) else { throw BenchmarkError("bad count") }
        let directory = try request.require("directory")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = (directory as NSString).appendingPathComponent("bench.sqlite")
        let passes = Self.passes.map { (key: $0.key, file: files[$0.file], revision: $0.file) }

        var reply: WorkerReply
        switch implementation {
        case .cFloor:
            return try CFloorImporter.run(shape: shape, count: count, directory: directory, passes: Self.passes.map {
                (key: $0.key, revision: $0.file, expectedChanges: $0.changesAll ? count : 0)
            })
        case .foundationGRDB:
            reply = try FoundationGRDBImporter.run(database: database, passes: passes.map { ($0.key, $0.file) })
        case .python, .duckDB:
            throw BenchmarkError("\(implementation.displayName) runs as its own script")
        case .sqliteShell:
            return try CompetitorImporter.runSQLiteShell(try request.require("tool"), shape: shape, database: database,
                                                         passes: passes.map { ($0.key, $0.file) })
        case .sqliteUtils:
            return try CompetitorImporter.runSQLiteUtils(try request.require("tool"), shape: shape, database: database,
                                                         passes: passes.map { ($0.key, $0.file) })
        case .replica, .replicaEntity, .replicaStdin, .replicaChunks, .replicaParse:
            reply = try await ReplicaImporter.run(shape: shape, mode: implementation.replicaMode ?? .route, database: database,
                                                  passes: passes.map { ($0.key, $0.file) })
            if implementation == .replicaParse { return reply }
            if implementation == .replica { try Self.checkTableLayout(database: database, shape: shape) }
        }
        reply.checksum = try CFloorImporter.checksum(database: database, shape: shape)
        return reply
    }

    /// Checks that the table Replica created is the one the baselines create (``ImportShape/createSQL``).
    ///
    /// - Throws: ``BenchmarkError`` showing both when they differ.
    static func checkTableLayout(database: String, shape: ImportShape) throws {
        var text = [CChar](repeating: 0, count: 2048)
        let status = cfloor_query_text(database, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = '\(shape.table)'",
                                       &text, text.count)
        let replica = CFloorImporter.cText(text)
        let expected = shape.createSQL.replacingOccurrences(of: "IF NOT EXISTS ", with: "")
        guard status == 0, replica == expected else {
            throw BenchmarkError("Replica's table differs from the baselines': \(replica) (status \(status)) vs \(expected)")
        }
    }

    /// Runs one implementation in a child process.
    private func runImplementation(_ implementation: Implementation, shape: ImportShape, files: [String], count: Int,
                                   tools: CompetitorTools, context: BenchmarkContext) throws -> (reply: WorkerReply, peakMemory: Int) {
        let directory = (context.scratchDirectory as NSString).appendingPathComponent("db-\(implementation.rawValue)")
        if implementation == .python, let python = context.python {
            return try context.runChild([python, Self.pythonScript, shape.rawValue, files[0], files[1], directory,
                                         shape.checksumSQL])
        }
        if implementation == .duckDB {
            guard let python = tools.venvPython else { throw BenchmarkError("DuckDB is not installed") }
            return try context.runChild([python, CompetitorTools.duckDBScript, shape.rawValue, files[0], files[1], directory,
                                         shape.countsSQL])
        }
        var parameters = ["shape": shape.rawValue, "first": files[0], "second": files[1], "count": String(count),
                          "directory": directory]
        parameters["tool"] = implementation == .sqliteShell ? tools.sqliteShell
            : implementation == .sqliteUtils ? tools.sqliteUtils : nil
        let request = WorkerRequest(implementation: implementation.rawValue, parameters: parameters)
        return try context.runWorker(workload: name, request: request)
    }

    /// `Benchmarks/Scripts/import_baseline.py`.
    static let pythonScript = scriptPath("import_baseline.py")

    /// A file of `Benchmarks/Scripts`, found from this source file's path.
    static func scriptPath(_ name: String) -> String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<5 { url.deleteLastPathComponent() }   // this file, Import, Workloads, replica-bench, Sources
        return url.appendingPathComponent("Scripts").appendingPathComponent(name).path
    }
}
