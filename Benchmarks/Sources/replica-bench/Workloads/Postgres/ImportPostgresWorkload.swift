import Foundation
import Replica
import ReplicaPostgres

/// `import-postgres`: a people JSON file into a PostgreSQL replica, rows/s, passes 1–3 as in
/// `import` (insert into an empty table, update every row, unchanged data), against a floor
/// that cannot be beaten from outside the server: `psql \copy` of the same rows, already in
/// COPY's text format, into a temporary table of the same shape, plus one plain
/// `INSERT … SELECT … ON CONFLICT DO UPDATE` merge, in one transaction per pass.
///
/// Replica runs in a child process (its peak memory is read from `wait4`): it imports the JSON
/// file into the `Person` entity as `replica import --entity Person` does, parsing it, streaming
/// its rows with `COPY … FROM STDIN` into a temporary table and merging them, writing only rows
/// whose values differ and reporting the exact keys inserted and updated (the floor reports
/// nothing). Both run against the same throwaway server, one after the other, each in a
/// database of its own; the two tables must hold the same rows at the end.
struct ImportPostgresWorkload: Workload {
    let name = "import-postgres"
    let summary = "people JSON → a PostgreSQL replica (COPY + one merge), rows/s, passes 1–3, vs psql \\copy + INSERT … SELECT"

    static let memoryLimit = 100_000_000
    static let minimumRatio = 0.7

    func run(in context: BenchmarkContext) async throws -> [ResultRow] {
        let count = context.quick ? 100_000 : 1_000_000
        let runs = context.runs ?? (context.quick ? 1 : 2)
        let directory = (context.scratchDirectory as NSString).appendingPathComponent("import-postgres")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let json = [0, 1].map { (directory as NSString).appendingPathComponent("people-\($0).json") }
        let text = [0, 1].map { (directory as NSString).appendingPathComponent("people-\($0).tsv") }
        var bytes = 0
        for revision in 0...1 {
            let data = PeopleImportData(count: count, revision: revision)
            bytes = try data.writeJSON(to: json[revision])
            _ = try data.writeCopyText(to: text[revision])
        }
        context.log("import-postgres: wrote \(Report.formatCount(count)) people as JSON (\(Report.formatBytes(bytes))) and COPY text")

        let cluster = try PostgresBenchCluster.start(in: (directory as NSString).appendingPathComponent("cluster"))
        defer { cluster.stop() }
        let schema = try Schema(contentsOf: URL(fileURLWithPath: SyncPagesWorkload.schemaPath))
        var replicaSeconds: [String: [Double]] = [:]
        var floorSeconds: [String: [Double]] = [:]
        var peak = 0
        var problems: [String] = []
        for run in 1...runs {
            context.log("import-postgres: run \(run)/\(runs), Replica…")
            let replicaURL = try cluster.makeDatabase("bench_replica")
            let (reply, memory) = try context.runWorker(workload: name, request: WorkerRequest(
                implementation: "replica", parameters: ["url": replicaURL, "first": json[0], "second": json[1]]))
            peak = max(peak, memory)
            for pass in ImportWorkload.passes {
                replicaSeconds[pass.key, default: []].append(reply.seconds[pass.key] ?? .nan)
                let changes = reply.counts["\(pass.key).changes"] ?? -1
                if changes != (pass.changesAll ? count : 0) {
                    problems.append("Replica \(pass.key): \(changes) changes, expected \(pass.changesAll ? count : 0)")
                }
            }

            context.log("import-postgres: run \(run)/\(runs), psql floor…")
            let floorURL = try cluster.makeDatabase("bench_floor")
            // The same table as Replica's: created by opening a replica with the same schema.
            let replica = try await PostgresReplica.open(url: floorURL, schema: schema)
            await replica.close()
            for pass in ImportWorkload.passes {
                let script = (directory as NSString).appendingPathComponent("floor-\(pass.key).sql")
                try Self.floorScript(file: text[pass.file]).write(toFile: script, atomically: true, encoding: .utf8)
                let start = ContinuousClock.now
                _ = try cluster.psql(floorURL, file: script)
                floorSeconds[pass.key, default: []].append(start.duration(to: .now).seconds)
            }
            let stored = try cluster.psql(replicaURL, Self.checksumSQL)
            let floor = try cluster.psql(floorURL, Self.checksumSQL)
            if stored != floor { problems.append("Replica stored \(stored.trimmed), the floor \(floor.trimmed)") }
            context.log("import-postgres: Replica " + Self.describe(replicaSeconds) + "; floor " + Self.describe(floorSeconds)
                        + "; Replica's peak \(Report.formatBytes(memory))")
        }
        problems.forEach { context.log("import-postgres: PROBLEM: \($0)") }

        return ImportWorkload.passes.enumerated().map { index, pass in
            let best = { (seconds: [Double]) -> Double? in
                seconds.filter(\.isFinite).min().map { Double(count) / $0 }
            }
            var row = ResultRow(workload: "import-postgres, \(pass.label)", unit: "rows/s",
                                replica: Cell(best(replicaSeconds[pass.key] ?? [])))
            row.baselines = [BaselineCell(name: "psql \\copy + merge", cell: Cell(best(floorSeconds[pass.key] ?? [])),
                                          minimumRatio: Self.minimumRatio)]
            if index == 0 {
                row.peakMemory = [MemoryReading(name: "Replica", bytes: peak, limit: context.quick ? nil : Self.memoryLimit)]
                row.notes = [String(format: "import-postgres: %@ people (%.0f MB of JSON), best of %d runs; Replica imports the "
                                    + "JSON into the entity: parses it, COPYs its rows into a temporary table and merges them "
                                    + "(only differing rows, exact change set); the floor is psql \\copy of the same rows in COPY text format "
                                    + "into a temporary table plus a plain INSERT … SELECT … ON CONFLICT DO UPDATE, one "
                                    + "transaction per pass; one throwaway PostgreSQL %@ server on loopback, default "
                                    + "durability.", Report.formatCount(count), Double(bytes) / 1e6, runs,
                                    Self.serverVersion(cluster))] + problems
            }
            return row
        }
    }

    /// One pass of the floor: the COPY and a plain merge, in one transaction.
    static func floorScript(file: String) -> String {
        let columns = #""id", "name", "numberOfKids", "kilometersWalked", "avatar""#
        let updates = #""name" = EXCLUDED."name", "numberOfKids" = EXCLUDED."numberOfKids", "#
            + #""kilometersWalked" = EXCLUDED."kilometersWalked", "avatar" = EXCLUDED."avatar""#
        return """
            BEGIN;
            CREATE TEMPORARY TABLE stage (LIKE "people") ON COMMIT DROP;
            \\copy stage (\(columns)) FROM '\(file)'
            INSERT INTO "people" (\(columns)) SELECT \(columns) FROM stage ON CONFLICT ("id") DO UPDATE SET \(updates);
            COMMIT;

            """
    }

    /// A fingerprint of the people table.
    static let checksumSQL = #"SELECT count(*), sum("id"), sum("numberOfKids"), sum(length("name")), "#
        + #"sum("kilometersWalked"), count("avatar"), sum(length("avatar")) FROM "people""#

    static func describe(_ seconds: [String: [Double]]) -> String {
        ImportWorkload.passes.compactMap { seconds[$0.key]?.last }.map { String(format: "%.2f s", $0) }.joined(separator: ", ")
    }

    static func serverVersion(_ cluster: PostgresBenchCluster) -> String {
        ((try? cluster.psql(cluster.server + "/postgres", "SHOW server_version")) ?? "?").trimmed
    }

    func runWorker(_ request: WorkerRequest) async throws -> WorkerReply {
        let schema = try Schema(contentsOf: URL(fileURLWithPath: SyncPagesWorkload.schemaPath))
        let replica = try await PostgresReplica.open(url: try request.require("url"), schema: schema)
        var reply = WorkerReply()
        do {
            let files = [try request.require("first"), try request.require("second")]
            for pass in ImportWorkload.passes {
                let start = ContinuousClock.now
                let result = try await replica.importFile(files[pass.file], into: .entity("Person"))
                reply.seconds[pass.key] = start.duration(to: .now).seconds
                let changes = result.changes["Person"]
                reply.counts["\(pass.key).changes"] = (changes?.inserted.count ?? 0) + (changes?.updated.count ?? 0)
                    + (changes?.deleted.count ?? 0)
            }
        } catch {
            await replica.close()
            throw error
        }
        await replica.close()
        return reply
    }
}

extension String {
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
