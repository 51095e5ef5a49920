import Foundation
import GRDB
import Replica
import ReplicaHTTP
import ReplicaServer

/// `sync-offset`: a latency-bound paged sync (issue 59). 20,000 objects in 200 pages of 100,
/// offset pagination with a total, each response delayed 20 ms by the mock server, synced by
/// Replica at 4 pages in flight (`ClientConfiguration.concurrentPages`, the default) and at 1,
/// each as a ratio of the ideal (pages × latency ÷ concurrency: 1.0 s and 4.0 s), beside dlt's
/// `rest_api` source syncing the same pages in the same run.
///
/// The mock server (memory store, its own child process, ``SyncOffsetServer``) serves the
/// benchmark's `Item` (``schemaJSON``) at `GET /items?offset=N&limit=100`, answering
/// `{"items": [...], "total": 20000, "offset": N, "limit": 100}` after 20 ms. Each sync runs in a
/// child process of its own into a fresh store: Replica's through `ReplicaClient.call("/items")`
/// with ReplicaHTTP's `HTTPTransport` (the call timed), dlt's as `Scripts/sync_dlt.py` in the
/// benchmark's virtual environment, timed from its start to its exit. Every sync must store the
/// 20,000 rows (and Replica read 200 pages).
///
/// Targets: Replica at most 1.5× the ideal time at either concurrency (rate ≥ 0.67× the ideal's),
/// and ahead of dlt (Replica ÷ dlt ≥ 1×, as for every tool users would pick instead, issue 31).
struct SyncOffsetWorkload: Workload {
    let name = "sync-offset"
    let summary = "20,000 objects in 200 offset pages of 100 at 20 ms latency: Replica at 4 and 1 pages in flight vs the ideal and dlt's rest_api"

    static let objectCount = 20_000
    static let pageSize = 100
    static let latency = Duration.milliseconds(20)
    /// Replica's pages in flight: the default (`ClientConfiguration.concurrentPages`) and one.
    static let concurrencies = [4, 1]
    /// The most time Replica may take, as a multiple of the ideal.
    static let targetTimeRatio = 1.5
    static var pageCount: Int { (objectCount + pageSize - 1) / pageSize }

    /// `Benchmarks/Scripts/sync_dlt.py`.
    static let dltScript = ImportWorkload.scriptPath("sync_dlt.py")

    /// The schema both the client and the mock server read: one entity, and a route whose
    /// pagination the server mirrors (its `offset` style: `items` envelope, `/total`).
    static let schemaJSON = """
        {
          "name": "sync-offset",
          "version": 1,
          "keyConvention": "camelCase",
          "entities": {
            "Item": {
              "table": "items",
              "attributes": {"id": "integer", "name": "string", "category": "string", "score": "double", "active": "bool"}
            }
          },
          "routes": [
            {"path": "/items", "target": "Item", "stale": "delete", "envelope": "items",
             "pagination": {"style": "offset", "limit": \(pageSize), "total": "/total"}}
          ]
        }
        """

    /// The object at `index` (from 0), as JSON.
    static func object(_ index: Int) -> String {
        let categories = ["tools", "books", "garden", "toys"]
        let id = index + 1
        let score = Double(id * 37 % 1000) / 8
        return #"{"id": \#(id), "name": "Item \#(id)", "category": "\#(categories[id % 4])", "score": \#(score), "active": \#(id % 3 != 0)}"#
    }

    /// The ideal time of a sync with `concurrency` pages in flight: pages × latency ÷ concurrency.
    static func idealSeconds(concurrency: Int) -> Double {
        Double(pageCount) * latency.seconds / Double(concurrency)
    }

    func run(in context: BenchmarkContext) async throws -> [ResultRow] {
        // The issue's sizes in both modes (the run is short); fewer repetitions with --quick.
        let runs = context.runs ?? (context.quick ? 3 : 5)
        let directory = (context.scratchDirectory as NSString).appendingPathComponent("sync-offset")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let schemaPath = (directory as NSString).appendingPathComponent("schema.json")
        try Data(Self.schemaJSON.utf8).write(to: URL(fileURLWithPath: schemaPath))
        let dataPath = (directory as NSString).appendingPathComponent("items.json")
        let objects = (0..<Self.objectCount).map(Self.object)
        try Data(("[\n" + objects.joined(separator: ",\n") + "\n]\n").utf8).write(to: URL(fileURLWithPath: dataPath))

        // dlt, from the benchmark's own virtual environment; skipped with a note when it cannot be had.
        var dltPython: String?
        var dltMissing: String?
        do {
            dltPython = try CompetitorTools.environmentPython(context)
        } catch {
            dltMissing = "\(error)"
            context.log("sync-offset: dlt: \(error)")
        }

        let control = (directory as NSString).appendingPathComponent("control")
        try FileManager.default.createDirectory(atPath: control, withIntermediateDirectories: true)
        let serverRequest = WorkerRequest(implementation: "server", parameters: [
            "control": control, "schema": schemaPath, "data": dataPath,
        ])
        context.log("sync-offset: starting the mock server child (\(Report.formatCount(Self.objectCount)) objects, "
                    + "offset pages of \(Self.pageSize), \(Int(Self.latency.seconds * 1000)) ms latency)…")
        var measured = Measurements()
        try await SyncPagesServer.serving(workload: name, request: serverRequest, context: context) { port in
            let base = "http://127.0.0.1:\(port)"
            let jobs = Self.concurrencies.map { "replica.c\($0)" } + ["dlt"]
            for run in 1...runs {
                // Each run starts with another job, so a slow minute of the shared machine is spread.
                let order = jobs.indices.map { jobs[($0 + run - 1) % jobs.count] }
                for job in order {
                    let database = (directory as NSString).appendingPathComponent("run\(run)-\(job).sqlite")
                    if job == "dlt" {
                        guard let python = dltPython else { continue }
                        measureDLT(python: python, base: base, directory: (directory as NSString).appendingPathComponent("dlt-\(run)"),
                                   run: run, runs: runs, into: &measured, context: context)
                    } else if let concurrency = Int(job.dropFirst("replica.c".count)) {
                        try measureReplica(concurrency: concurrency, base: base, schema: schemaPath, database: database,
                                           run: run, runs: runs, into: &measured, context: context)
                    }
                }
            }
        }
        return rows(measured, runs: runs, dltMissing: dltMissing)
    }

    /// What the runs measured, by job (`replica.c4`, `replica.c1`, `dlt`).
    private struct Measurements {
        /// The timed figure of each run: Replica's call, dlt's process start to exit.
        var seconds: [String: [Double]] = [:]
        /// Further timings of each run: each child from its start to its exit, dlt's phases.
        var phases: [String: [Double]] = [:]
        var peaks: [String: Int] = [:]
        var problems: [String] = []
        var dltFailure: String?
    }

    private func measureReplica(concurrency: Int, base: String, schema: String, database: String, run: Int, runs: Int,
                                into measured: inout Measurements, context: BenchmarkContext) throws {
        let job = "replica.c\(concurrency)"
        let start = ContinuousClock.now
        let (reply, peak) = try context.runWorker(workload: name, request: WorkerRequest(implementation: "sync", parameters: [
            "base": base, "schema": schema, "database": database, "concurrency": String(concurrency),
        ]))
        let process = start.duration(to: .now).seconds
        defer { try? FileManager.default.removeItem(atPath: database) }
        guard let seconds = reply.seconds["sync"] else { throw BenchmarkError("sync-offset: the Replica child timed nothing") }
        measured.seconds[job, default: []].append(seconds)
        measured.phases["\(job).process", default: []].append(process)
        measured.peaks[job] = max(measured.peaks[job] ?? 0, peak)
        let rows = reply.counts["rows"] ?? -1
        let pages = reply.counts["pages"] ?? -1
        let inserted = reply.counts["inserted"] ?? -1
        if rows != Self.objectCount || inserted != Self.objectCount {
            measured.problems.append("Replica at \(concurrency) page(s) in flight, run \(run): \(rows) rows stored, \(inserted) inserted, "
                                     + "expected \(Self.objectCount)")
        }
        if pages != Self.pageCount {
            measured.problems.append("Replica at \(concurrency) page(s) in flight, run \(run): \(pages) pages, expected \(Self.pageCount)")
        }
        if reply.checksum != Self.expectedChecksum {
            measured.problems.append("Replica at \(concurrency), run \(run): stored \(reply.checksum ?? "?"), expected \(Self.expectedChecksum)")
        }
        context.log(String(format: "sync-offset: run %ld/%ld, Replica, %ld page(s) in flight: %.3f s (%.2f× the ideal %.2f s), "
                           + "child %.2f s start to exit, %ld pages, %ld rows, peak %@",
                           run, runs, concurrency, seconds, seconds / Self.idealSeconds(concurrency: concurrency),
                           Self.idealSeconds(concurrency: concurrency), process, pages, rows, Report.formatBytes(peak)))
    }

    private func measureDLT(python: String, base: String, directory: String, run: Int, runs: Int,
                            into measured: inout Measurements, context: BenchmarkContext) {
        let start = ContinuousClock.now
        do {
            let (reply, peak) = try context.runChild([python, Self.dltScript, base, directory, String(Self.pageSize)])
            let seconds = start.duration(to: .now).seconds
            measured.seconds["dlt", default: []].append(seconds)
            for (key, value) in reply.seconds { measured.phases["dlt.\(key)", default: []].append(value) }
            measured.peaks["dlt"] = max(measured.peaks["dlt"] ?? 0, peak)
            let rows = reply.counts["rows"] ?? -1
            if rows != Self.objectCount || reply.checksum != Self.expectedChecksum {
                measured.problems.append("dlt, run \(run): \(rows) rows, \(reply.checksum ?? "?"), expected \(Self.expectedChecksum)")
            }
            context.log(String(format: "sync-offset: run %ld/%ld, dlt rest_api: %.3f s start to exit (import %.2f s, extract %.2f s, "
                               + "normalize %.2f s, load %.2f s), %ld rows, peak %@",
                               run, runs, seconds, reply.seconds["import"] ?? 0, reply.seconds["extract"] ?? 0,
                               reply.seconds["normalize"] ?? 0, reply.seconds["load"] ?? 0, rows, Report.formatBytes(peak)))
        } catch {
            measured.dltFailure = "\(error)"
            context.log("sync-offset: dlt failed: \(error)")
        }
    }

    /// What every sync must store: the row count and the sum of the ids.
    static var expectedChecksum: String { "n=\(objectCount) id=\(objectCount * (objectCount + 1) / 2)" }

    private func rows(_ measured: Measurements, runs: Int, dltMissing: String?) -> [ResultRow] {
        let count = Double(Self.objectCount)
        let dltSeconds = median(measured.seconds["dlt"] ?? [])
        let dltCell: Cell
        if let dltSeconds {
            dltCell = Cell(count / dltSeconds, note: String(format: "%.2f s", dltSeconds))
        } else if let failure = measured.dltFailure {
            dltCell = Cell(note: "failed: \(failure)")
        } else {
            dltCell = Cell(note: dltMissing.map { "dlt \($0)" } ?? "—")
        }
        var result: [ResultRow] = []
        for concurrency in Self.concurrencies {
            let job = "replica.c\(concurrency)"
            let ideal = Self.idealSeconds(concurrency: concurrency)
            let seconds = median(measured.seconds[job] ?? [])
            let replica = seconds.map { Cell(count / $0, note: String(format: "%.2f s, %.2f× the ideal", $0, $0 / ideal)) } ?? Cell(note: "—")
            var row = ResultRow(workload: "sync-offset: \(Report.formatCount(Self.objectCount)) objects, \(Self.pageCount) offset pages "
                                + "of \(Self.pageSize) at \(Int(Self.latency.seconds * 1000)) ms, \(concurrency) page\(concurrency == 1 ? "" : "s") in flight",
                                unit: "rows/s", replica: replica)
            row.baselines = [
                BaselineCell(name: "ideal", cell: Cell(count / ideal, note: String(format: "%.2f s", ideal)),
                             minimumRatio: 1 / Self.targetTimeRatio),
                BaselineCell(name: "dlt rest_api", cell: dltCell, minimumRatio: 1),
            ]
            row.peakMemory = [MemoryReading(name: "Replica", bytes: measured.peaks[job] ?? 0)]
                + (measured.peaks["dlt"].map { [MemoryReading(name: "dlt", bytes: $0)] } ?? [])
            let failed = measured.problems.contains { $0.hasPrefix("Replica at \(concurrency) ") }
            row.targets = [Target(description: "\(Report.formatCount(Self.objectCount)) rows stored every run",
                                  met: seconds == nil ? nil : !failed)]
            result.append(row)
        }
        func phase(_ key: String) -> String {
            median(measured.phases[key] ?? []).map { String(format: "%.2f s", $0) } ?? "—"
        }
        result[0].notes = [
            String(format: "sync-offset: %@ objects (`Item`: id, name, category, score, active) in the mock server's memory store, "
                   + "in a child process of its own, answering `GET /items?offset=N&limit=%ld` with `{\"items\": [...], \"total\": %ld, "
                   + "\"offset\": N, \"limit\": %ld}` after %.0f ms (MockConditions latency, slept per request, so requests in flight "
                   + "wait together): %ld pages. Each sync is a child process of its own into a fresh store, the three in turn in every "
                   + "run, against the same server: Replica's `ReplicaClient.call(\"/items\")` (ReplicaHTTP's HTTPTransport, the "
                   + "route's offset pagination with its total, `concurrentPages` 4 and 1) into SQLite, the call timed; dlt's "
                   + "`rest_api` source (`Scripts/sync_dlt.py`: offset paginator, limit %ld, total_path `total`, data selector "
                   + "`items`, write disposition replace) into DuckDB, timed from the process's start to its exit. The ideal is "
                   + "pages × latency ÷ pages in flight (%.1f s at 4, %.1f s at 1); the ratio ≥ 0.67× is at most 1.5× its time. ",
                   Report.formatCount(Self.objectCount), Self.pageSize, Self.objectCount, Self.pageSize, Self.latency.seconds * 1000,
                   Self.pageCount, Self.pageSize, Self.idealSeconds(concurrency: 4), Self.idealSeconds(concurrency: 1))
            + (runs > 1 ? "Median of \(runs) runs." : "One run."),
            "sync-offset: each Replica child from its start to its exit (opening the store, the sync, counting the rows): "
            + "\(phase("replica.c4.process")) at 4 pages in flight, \(phase("replica.c1.process")) at 1; dlt's own clock: "
            + "importing dlt \(phase("dlt.import")), extract (the pages) \(phase("dlt.extract")), normalize \(phase("dlt.normalize")), "
            + "load into DuckDB \(phase("dlt.load")) (medians).",
        ] + measured.problems.map { "sync-offset: PROBLEM: \($0)" }
        return result
    }

    func runWorker(_ request: WorkerRequest) async throws -> WorkerReply {
        switch request.implementation {
        case "server": return try await SyncOffsetServer.run(request)
        case "sync": return try await Self.sync(request)
        default: throw BenchmarkError("unknown sync-offset implementation '\(request.implementation)'")
        }
    }

    /// The Replica child: one sync of `/items` into a fresh store at `concurrency` pages in flight.
    private static func sync(_ request: WorkerRequest) async throws -> WorkerReply {
        guard let base = URL(string: try request.require("base")), let concurrency = Int(try request.require("concurrency")) else {
            throw BenchmarkError("sync-offset: bad base URL or concurrency")
        }
        let database = try request.require("database")
        try? FileManager.default.removeItem(atPath: database)
        let store = try Store(path: database, schema: try Schema(contentsOf: URL(fileURLWithPath: try request.require("schema"))))
        let engine = try SQLiteReplica(store: store)
        let transport = HTTPTransport()
        var configuration = ClientConfiguration(transport: transport, baseURLs: [.production: base])
        configuration.timeout = .seconds(600)
        configuration.concurrentPages = concurrency
        let client = ReplicaClient(engine: engine, configuration: configuration)
        var reply = WorkerReply()
        let start = ContinuousClock.now
        let result = try await client.call("/items")
        reply.seconds["sync"] = start.duration(to: .now).seconds
        try await transport.shutdown()
        reply.counts["pages"] = result.pages
        reply.counts["inserted"] = result.changes["Item"]?.inserted.count ?? 0
        let (rows, ids) = try await store.database.read { db -> (Int, Int) in
            let row = try Row.fetchOne(db, sql: "SELECT count(*), sum(id) FROM items")
            return (row.flatMap { $0[0] as Int? } ?? 0, row.flatMap { $0[1] as Int? } ?? 0)
        }
        reply.counts["rows"] = rows
        reply.checksum = "n=\(rows) id=\(ids)"
        return reply
    }
}

/// The `server` child of `sync-offset`: the mock server (memory store) with the objects, offset
/// pages of 100 by default, every response delayed by the workload's latency, on 127.0.0.1 port 0.
/// It writes `pid` and `port` into the control folder and stops when `stop` appears there (or
/// after 30 minutes), as ``SyncPagesServer`` does.
enum SyncOffsetServer {
    static func run(_ request: WorkerRequest) async throws -> WorkerReply {
        let control = try request.require("control")
        let schema = try Schema(contentsOf: URL(fileURLWithPath: try request.require("schema")))
        var options = MockServerOptions(host: "127.0.0.1", port: 0,
                                        conditions: MockConditions(latency: SyncOffsetWorkload.latency...SyncOffsetWorkload.latency))
        options.pagination = .offset
        options.pageSize = SyncOffsetWorkload.pageSize
        let server = try await MockServer.start(resources: MockResource.resources(for: schema), routes: MockRoute.routes(for: schema),
                                                options: options)
        let loaded = try await server.load(file: try request.require("data"), into: "items")
        guard loaded.loaded == SyncOffsetWorkload.objectCount else {
            await server.stop()
            throw BenchmarkError("sync-offset: the server loaded \(loaded.loaded) objects, expected \(SyncOffsetWorkload.objectCount)")
        }
        try SyncPagesServer.writePID(control)
        try Data(String(server.port).utf8).write(to: URL(fileURLWithPath: (control as NSString).appendingPathComponent("port")),
                                                 options: .atomic)
        let deadline = ContinuousClock.now + .seconds(1800)
        let stop = (control as NSString).appendingPathComponent("stop")
        while !FileManager.default.fileExists(atPath: stop) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        await server.stop()
        return WorkerReply()
    }
}
