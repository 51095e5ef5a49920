import Foundation

/// `import`: JSON file to committed SQLite rows, rows/s, for Replica and three baselines.
///
/// The parent writes two seeded JSON files (the second changes every object),
/// then runs each implementation in its own child process, three passes each:
/// 1. the first file into an empty database (every row inserted),
/// 2. the second file (every row updated),
/// 3. the second file again (nothing changes).
///
/// The C floor gets the values already in memory; the others read the file.
/// Each child reports its pass times, change counts and a checksum of the
/// stored rows; the parent reads the child's peak memory from `wait4`.
struct ImportWorkload: Workload {
    let name = "import"
    let summary = "JSON file → committed SQLite rows, rows/s: Replica vs C floor, Python, Foundation+GRDB"

    /// Replica's peak memory target on the full file.
    static let memoryLimit = 100_000_000

    /// The implementations, in column order.
    enum Implementation: String, CaseIterable, Codable, Sendable {
        case replica
        case cFloor = "c-floor"
        case python
        case foundationGRDB = "foundation-grdb"

        var displayName: String {
            switch self {
            case .replica: "Replica"
            case .cFloor: "C floor"
            case .python: "Python"
            case .foundationGRDB: "Foundation+GRDB"
            }
        }

        /// The least `Replica ÷ this` the project aims for.
        var minimumRatio: Double? {
            switch self {
            case .cFloor: 0.8
            case .python: 5
            case .replica, .foundationGRDB: nil
            }
        }
    }

    /// The three passes: name, label, file (0 or 1), expected changes (as a fraction of the rows).
    static let passes: [(key: String, label: String, file: Int, changesAll: Bool)] = [
        ("pass1", "import, pass 1: insert into empty store", 0, true),
        ("pass2", "import, pass 2: update every row", 1, true),
        ("pass3", "import, pass 3: unchanged data", 1, false),
    ]

    func run(in context: BenchmarkContext) async throws -> [ResultRow] {
        let count = context.quick ? 100_000 : 1_000_000
        let runs = context.runs ?? 3
        let files = [0, 1].map { (context.scratchDirectory as NSString).appendingPathComponent("items-\($0).json") }
        let clock = ContinuousClock()
        let start = clock.now
        var bytes = 0
        for (revision, path) in files.enumerated() {
            bytes = try ImportData(count: count, revision: revision).writeJSON(to: path)
        }
        // import-live reuses the first file.
        markGeneratedItemsFile(count: count, context: context)
        context.log(String(format: "import: wrote 2 files of %@ objects, %.1f MB each, in %.1f s",
                           Report.formatCount(count), Double(bytes) / 1e6, start.duration(to: clock.now).seconds))

        var seconds: [Implementation: [String: [Double]]] = [:]
        var peaks: [Implementation: Int] = [:]
        var failures: [Implementation: String] = [:]
        var problems: [String] = []
        var checksums: [Implementation: String] = [:]

        for run in 1...runs {
            for implementation in Implementation.allCases where failures[implementation] == nil {
                if implementation == .python && context.python == nil {
                    failures[implementation] = "no python3"
                    continue
                }
                context.log("import: run \(run)/\(runs), \(implementation.displayName)…")
                do {
                    let (reply, peak) = try runImplementation(implementation, files: files, count: count, context: context)
                    for pass in Self.passes {
                        guard let value = reply.seconds[pass.key] else { throw BenchmarkError("no time for \(pass.key)") }
                        seconds[implementation, default: [:]][pass.key, default: []].append(value)
                        let changes = reply.counts["\(pass.key).changes"] ?? -1
                        let expected = pass.changesAll ? count : 0
                        if changes != expected {
                            problems.append("\(implementation.displayName) \(pass.key): \(changes) changes, expected \(expected)")
                        }
                    }
                    peaks[implementation] = max(peaks[implementation] ?? 0, peak)
                    if let checksum = reply.checksum {
                        checksums[implementation] = checksum
                        context.log("import: \(implementation.displayName) stored \(checksum)")
                    }
                    let times = Self.passes.compactMap { reply.seconds[$0.key] }.map { String(format: "%.2f s", $0) }
                    context.log("import: \(implementation.displayName): \(times.joined(separator: ", ")), "
                                + "peak \(Report.formatBytes(peak))")
                } catch {
                    context.log("import: \(implementation.displayName) failed: \(error)")
                    failures[implementation] = "failed: \(error)"
                }
            }
        }

        if let reference = checksums[.cFloor] ?? checksums.values.first {
            for (implementation, checksum) in checksums where checksum != reference {
                problems.append("\(implementation.displayName) stored different data: \(checksum) vs \(reference)")
            }
        }
        problems.forEach { context.log("import: PROBLEM: \($0)") }

        func cell(_ implementation: Implementation, _ pass: String) -> Cell {
            if let failure = failures[implementation] { return Cell(note: failure) }
            guard let time = median(seconds[implementation]?[pass] ?? []), time > 0 else { return Cell(note: "—") }
            return Cell(Double(count) / time)
        }

        var rows: [ResultRow] = []
        for (index, pass) in Self.passes.enumerated() {
            var row = ResultRow(workload: pass.label, unit: "rows/s", replica: cell(.replica, pass.key))
            for implementation in Implementation.allCases where implementation != .replica {
                row.baselines.append(BaselineCell(
                    name: implementation.displayName,
                    cell: cell(implementation, pass.key),
                    minimumRatio: pass.changesAll ? implementation.minimumRatio : nil
                ))
            }
            if index == 0 {
                row.peakMemory = Implementation.allCases.compactMap { implementation in
                    peaks[implementation].map {
                        MemoryReading(name: implementation.displayName, bytes: $0,
                                      limit: implementation == .replica && !context.quick ? Self.memoryLimit : nil)
                    }
                }
            }
            if pass.key == "pass3" {
                let replicaChanges = !problems.contains { $0.hasPrefix("Replica pass3") }
                let first = cell(.replica, "pass1").value, unchanged = cell(.replica, "pass3").value
                row.targets = [
                    Target(description: "0 changes", met: failures[.replica] == nil ? replicaChanges : nil),
                    Target(description: "≥ pass 1 rate",
                           met: first.flatMap { first in unchanged.map { $0 >= first } }),
                ]
            }
            row.notes = [
                String(format: "import: %@ objects of 8 fields, %.0f MB of JSON per file; ",
                       Report.formatCount(count), Double(bytes) / 1e6)
                + (runs > 1 ? "median of \(runs) runs; " : "one run; ")
                + "each implementation runs all three passes in one child process, whose peak RSS is shown "
                + "(wait4 ru_maxrss); the C floor's values are in memory before timing starts.",
            ] + problems.map { "import: PROBLEM: \($0)" }
            rows.append(row)
        }
        return rows
    }

    func runWorker(_ request: WorkerRequest) async throws -> WorkerReply {
        guard let implementation = Implementation(rawValue: request.implementation) else {
            throw BenchmarkError("unknown import implementation '\(request.implementation)'")
        }
        let files = [try request.require("first"), try request.require("second")]
        guard let count = Int(try request.require("count")) else { throw BenchmarkError("bad count") }
        let directory = try request.require("directory")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = (directory as NSString).appendingPathComponent("bench.sqlite")
        let passes = Self.passes.map { (key: $0.key, file: files[$0.file], revision: $0.file) }

        var reply: WorkerReply
        switch implementation {
        case .replica:
            reply = try await ReplicaImporter.run(database: database, passes: passes.map { ($0.key, $0.file) })
        case .cFloor:
            reply = try CFloorImporter.run(database: database, count: count, passes: passes.map { ($0.key, $0.revision) })
        case .foundationGRDB:
            reply = try FoundationGRDBImporter.run(database: database, passes: passes.map { ($0.key, $0.file) })
        case .python:
            throw BenchmarkError("the Python baseline runs as its own script")
        }
        reply.checksum = try CFloorImporter.checksum(database: database)
        return reply
    }

    /// Runs one implementation in a child process.
    private func runImplementation(_ implementation: Implementation, files: [String], count: Int,
                                   context: BenchmarkContext) throws -> (reply: WorkerReply, peakMemory: Int) {
        let directory = (context.scratchDirectory as NSString).appendingPathComponent("db-\(implementation.rawValue)")
        if implementation == .python, let python = context.python {
            return try context.runChild([python, Self.pythonScript, files[0], files[1], directory])
        }
        let request = WorkerRequest(implementation: implementation.rawValue, parameters: [
            "first": files[0], "second": files[1], "count": String(count), "directory": directory,
        ])
        return try context.runWorker(workload: name, request: request)
    }

    /// `Benchmarks/Scripts/import_baseline.py`, found from this source file's path.
    static let pythonScript: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<5 { url.deleteLastPathComponent() }   // this file, Import, Workloads, replica-bench, Sources
        return url.appendingPathComponent("Scripts/import_baseline.py").path
    }()
}
