import Foundation
import InMemoryTracing
import Replica
import ReplicaHTTP

/// `sync-incremental`: bringing a 1,000,000-row collection up to date after 1 % of it changed,
/// incrementally (the route's `incremental` declaration and the mock server's change feed)
/// against a full conditional sync of the same collection, in one run.
///
/// The mock server (memory store, its own child process) serves the people file in 10 pages. In
/// one sync child, two clients with their own stores first sync the whole collection: one with
/// `Schemas/people-live.json` (its full sync records the `X-Cursor`), one with
/// `Schemas/people.json` (conditional requests only). The server then updates every hundredth
/// person (10,000 objects, recorded in its change feed), and each client syncs again, timed:
/// the first sends `?since=CURSOR` and gets the 10,000 changed objects; the second revalidates its
/// 10 pages, every one of which changed.
///
/// Target: the incremental sync takes at most 0.05× the full conditional sync's time (its rate,
/// rows of the collection brought up to date per second, is at least 20× the full sync's).
/// Both stores must end with the same rows as the server.
struct SyncIncrementalWorkload: Workload {
    let name = "sync-incremental"
    let summary = "1 % of a 1M-row collection changed: an incremental (since-cursor) sync vs a full conditional sync"

    static let liveSchemaPath = SyncPagesWorkload.schemaPath.replacingOccurrences(of: "people.json", with: "people-live.json")

    func run(in context: BenchmarkContext) async throws -> [ResultRow] {
        let count = context.quick ? 100_000 : 1_000_000
        let runs = context.runs ?? 3
        let first = (context.scratchDirectory as NSString).appendingPathComponent("incremental-people-0.json")
        let changed = (context.scratchDirectory as NSString).appendingPathComponent("incremental-people-changed.json")
        let bytes = try PeopleData(count: count, revision: 0).writeJSON(to: first)
        try PeopleData(count: count, revision: 1).writeChanged(to: changed)
        context.log(String(format: "sync-incremental: wrote %@ people, %.1f MB", Report.formatCount(count), Double(bytes) / 1e6))
        var seconds: [String: [Double]] = [:]
        var problems: [String] = []
        for run in 1...runs {
            let directory = (context.scratchDirectory as NSString).appendingPathComponent("sync-incremental-\(run)")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            context.log("sync-incremental: run \(run)/\(runs)…")
            let reply = try await against(files: [first, changed], count: count, directory: directory, context: context)
            for (key, value) in reply.seconds { seconds[key, default: []].append(value) }
            for key in ["incremental", "full"] where reply.counts["\(key).updated"] != count / 100 {
                problems.append("run \(run): the \(key) sync updated \(reply.counts["\(key).updated"] ?? -1) rows, expected \(count / 100)")
            }
            if reply.counts["incremental.pages"] != 1 { problems.append("run \(run): the incremental sync took \(reply.counts["incremental.pages"] ?? -1) pages") }
            if reply.counts["same"] != 1 { problems.append("run \(run): the two stores differ after the syncs") }
            context.log(String(format: "sync-incremental: incremental %.3f s, full conditional %.3f s (%d pages)",
                               reply.seconds["incremental"] ?? 0, reply.seconds["full"] ?? 0, reply.counts["full.pages"] ?? 0))
            for key in ["incremental", "full"] {
                context.log(String(format: "sync-incremental:   %@: pages %.3f s (parse %.3f s), merge %.3f s", key,
                                   reply.seconds["\(key).replica.page"] ?? 0, reply.seconds["\(key).replica.parse"] ?? 0,
                                   reply.seconds["\(key).replica.merge"] ?? 0))
            }
        }
        problems.forEach { context.log("sync-incremental: PROBLEM: \($0)") }
        func rate(_ key: String) -> Cell {
            guard let time = median(seconds[key] ?? []), time > 0 else { return Cell(note: "—") }
            return Cell(Double(count) / time)
        }
        var row = ResultRow(workload: "sync-incremental: 1 % of \(Report.formatCount(count)) rows changed, brought up to date",
                            unit: "rows/s", replica: rate("incremental"))
        row.baselines = [BaselineCell(name: "full conditional sync", cell: rate("full"), minimumRatio: 20)]
        row.notes = [String(format: "sync-incremental: %@ people (%.0f MB of JSON) served by the mock server in %d pages; "
                            + "after 1 %% of them changed (every hundredth, recorded in its change feed), a client whose route "
                            + "declares `incremental` (people-live.json) sends its X-Cursor as ?since= and gets the changed "
                            + "objects, while a client of people.json revalidates its pages (every page changed); rates count "
                            + "the whole collection brought up to date; the ratio ≥ 20 is the incremental sync in at most 0.05× "
                            + "the full conditional sync's time; ", Report.formatCount(count), Double(bytes) / 1e6,
                            SyncPagesWorkload.pageCount)
                     + (runs > 1 ? "median of \(runs) runs." : "one run.")] + problems.map { "sync-incremental: PROBLEM: \($0)" }
        return [row]
    }

    func runWorker(_ request: WorkerRequest) async throws -> WorkerReply {
        switch request.implementation {
        case "server": return try await SyncPagesServer.run(request)
        case "sync": return try await Self.sync(request)
        default: throw BenchmarkError("unknown sync-incremental implementation '\(request.implementation)'")
        }
    }

    /// Starts the server child (people-live resources: its feed is on for every schema), runs the sync child, stops the server.
    private func against(files: [String], count: Int, directory: String, context: BenchmarkContext) async throws -> WorkerReply {
        let control = (directory as NSString).appendingPathComponent("control")
        try FileManager.default.createDirectory(atPath: control, withIntermediateDirectories: true)
        let serverRequest = WorkerRequest(implementation: "server", parameters: [
            "control": control, "first": files[0], "second": files[1], "schema": Self.liveSchemaPath,
        ])
        return try await SyncPagesServer.serving(workload: name, request: serverRequest, context: context) { port in
            try context.runWorker(workload: name, request: WorkerRequest(implementation: "sync", parameters: [
                "base": "http://127.0.0.1:\(port)", "control": control, "count": String(count), "directory": directory,
            ])).reply
        }
    }

    /// The sync child: both clients sync in full, the server changes 1 %, both sync again (timed).
    private static func sync(_ request: WorkerRequest) async throws -> WorkerReply {
        guard let count = Int(try request.require("count")), let base = URL(string: try request.require("base")) else {
            throw BenchmarkError("sync-incremental: bad count or base URL")
        }
        let control = try request.require("control")
        let directory = try request.require("directory")
        let transport = HTTPTransport()
        // Each client's spans: where a sync's time goes (the page exchanges, parsing, the merge).
        let tracers = ["live.sqlite": InMemoryTracer(), "plain.sqlite": InMemoryTracer()]
        func client(_ schema: String, _ file: String) throws -> (ReplicaClient, Store) {
            let store = try Store(path: (directory as NSString).appendingPathComponent(file),
                                  schema: try Schema(contentsOf: URL(fileURLWithPath: schema)))
            var configuration = ClientConfiguration(transport: transport, baseURLs: [.production: base])
            configuration.timeout = .seconds(600)
            if let tracer = tracers[file] { configuration.tracer = tracer }
            return (ReplicaClient(engine: try SQLiteReplica(store: store), configuration: configuration), store)
        }
        let (incremental, liveStore) = try client(liveSchemaPath, "live.sqlite")
        let (full, plainStore) = try client(SyncPagesWorkload.schemaPath, "plain.sqlite")
        let path = "/people?_page=1&_limit=\(count / SyncPagesWorkload.pageCount)"
        for client in [incremental, full] {
            let result = try await client.call(path)
            guard result.mode == .full, result.changes["Person"]?.inserted.count == count else {
                throw BenchmarkError("sync-incremental: the first sync inserted \(result.changes["Person"]?.inserted.count ?? 0) rows")
            }
        }
        try await SyncPagesServer.ask(control, "load-second")
        var reply = WorkerReply()
        for (key, client, tracer) in [("full", full, tracers["plain.sqlite"]), ("incremental", incremental, tracers["live.sqlite"])] {
            tracer?.clearAll()
            let start = ContinuousClock.now
            let result = try await client.call(path)
            reply.seconds[key] = start.duration(to: .now).seconds
            // The timed call's phases, summed over its pages: replica.page (request to staged page,
            // its parse included), replica.parse, replica.merge (the commit).
            for span in tracer?.finishedSpans ?? [] where ["replica.page", "replica.parse", "replica.merge"].contains(span.operationName) {
                let nanoseconds = span.endInstant.nanosecondsSinceEpoch - span.startInstant.nanosecondsSinceEpoch
                reply.seconds["\(key).\(span.operationName)", default: 0] += Double(nanoseconds) / 1e9
            }
            reply.counts["\(key).updated"] = result.changes["Person"]?.updated.count ?? 0
            reply.counts["\(key).pages"] = result.pages
            if key == "incremental" && result.mode != .incremental { throw BenchmarkError("sync-incremental: the second sync was \(result.mode)") }
        }
        try await transport.shutdown()
        reply.counts["same"] = try await SyncPagesWorkload.checksum(liveStore) == (try await SyncPagesWorkload.checksum(plainStore)) ? 1 : 0
        return reply
    }
}

extension PeopleData {
    /// Writes only the people this revision changes (every hundredth), as a JSON array.
    func writeChanged(to path: String) throws {
        let all = (path as NSString).deletingLastPathComponent + "/.all-\(revision).json"
        try writeJSON(to: all)
        defer { try? FileManager.default.removeItem(atPath: all) }
        let data = try Data(contentsOf: URL(fileURLWithPath: all))
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        let changed = lines.filter { $0.contains("(moved)") }.map { $0.hasSuffix(",") ? String($0.dropLast()) : String($0) }
        try Data(("[\n" + changed.joined(separator: ",\n") + "\n]\n").utf8).write(to: URL(fileURLWithPath: path))
    }
}
