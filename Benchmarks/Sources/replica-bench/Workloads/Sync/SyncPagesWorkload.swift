import Dispatch
import Foundation
import GRDB
import NIOConcurrencyHelpers
import Replica
import ReplicaHTTP
import ReplicaServer

/// `sync-pages`: one paged collection synced over HTTP as one sync session, against
/// `importFile` of the same objects from a file.
///
/// 1,000,000 people (`Schemas/people.json`; 100,000 with `--quick`) are served by the mock
/// server (memory store, in a child process) in 10 pages. In its own child process,
/// `ReplicaClient` syncs `/people?_page=1&_limit=…` into an empty store (pass 1), the server
/// then changes 1 % of the rows, spread over every page, and the client syncs again (pass 2).
/// Another child imports the same objects from files with `importFile` through the `/people`
/// route (pass 1: into an empty store; pass 2: the file with the 1 % changed).
///
/// Targets: each pass takes at most 1.3× the file import's time (so its rate is at least
/// 0.77× the file's), the sync child peaks at 100 MB or less, and the store's writer is held
/// only for the merge (reported in its own row).
struct SyncPagesWorkload: Workload {
    let name = "sync-pages"
    let summary = "a 10-page collection over HTTP as one sync session vs importFile of the same objects: rows/s, write-lock time, peak RSS"

    static let memoryLimit = 100_000_000
    static let pageCount = 10

    /// The passes: key, label, file revision, changed rows per 100.
    static let passes: [(key: String, label: String, revision: Int)] = [
        ("pass1", "sync-pages, pass 1: 10 pages into an empty store", 0),
        ("pass2", "sync-pages, pass 2: 1 % of rows changed on every page", 1),
    ]

    /// The repository's `Schemas/people.json`, found from this source file's path.
    static let schemaPath: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<6 { url.deleteLastPathComponent() }   // file, Sync, Workloads, replica-bench, Sources, Benchmarks
        return url.appendingPathComponent("Schemas/people.json").path
    }()

    func run(in context: BenchmarkContext) async throws -> [ResultRow] {
        let count = context.quick ? 100_000 : 1_000_000
        let runs = context.runs ?? 3
        let files = [0, 1].map { (context.scratchDirectory as NSString).appendingPathComponent("people-\($0).json") }
        var bytes = 0
        for (revision, path) in files.enumerated() { bytes = try PeopleData(count: count, revision: revision).writeJSON(to: path) }
        context.log(String(format: "sync-pages: wrote 2 files of %@ people, %.1f MB each",
                           Report.formatCount(count), Double(bytes) / 1e6))

        var seconds: [String: [String: [Double]]] = [:]
        var peaks: [String: Int] = [:]
        var problems: [String] = []
        for run in 1...runs {
            let directory = (context.scratchDirectory as NSString).appendingPathComponent("sync-pages-\(run)")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            context.log("sync-pages: run \(run)/\(runs), importFile…")
            let (fileReply, filePeak) = try context.runWorker(workload: name, request: WorkerRequest(
                implementation: "file", parameters: ["first": files[0], "second": files[1],
                                                     "directory": (directory as NSString).appendingPathComponent("file")]))
            context.log("sync-pages: run \(run)/\(runs), server and ReplicaClient…")
            let (syncReply, syncPeak) = try await syncAgainstServer(files: files, count: count, directory: directory, context: context)
            for (implementation, reply) in [("file", fileReply), ("sync", syncReply)] {
                for (key, value) in reply.seconds { seconds[implementation, default: [:]][key, default: []].append(value) }
            }
            peaks["file"] = max(peaks["file"] ?? 0, filePeak)
            peaks["sync"] = max(peaks["sync"] ?? 0, syncPeak)
            for pass in Self.passes {
                let expected = pass.revision == 0 ? count : count / 100
                for (implementation, reply) in [("importFile", fileReply), ("sync", syncReply)] {
                    let changes = reply.counts["\(pass.key).changes"] ?? -1
                    if changes != expected {
                        problems.append("\(implementation) \(pass.key): \(changes) changes, expected \(expected)")
                    }
                }
            }
            if fileReply.checksum != syncReply.checksum {
                problems.append("the sync stored \(syncReply.checksum ?? "?"), the file import \(fileReply.checksum ?? "?")")
            }
            context.log(String(format: "sync-pages: staged file %.2f s / %.2f s (writer held %.0f / %.0f ms)",
                               fileReply.seconds["staged.pass1"] ?? 0, fileReply.seconds["staged.pass2"] ?? 0,
                               (fileReply.seconds["staged.pass1.lock"] ?? 0) * 1000, (fileReply.seconds["staged.pass2.lock"] ?? 0) * 1000))
            context.log(String(format: "sync-pages: file %.2f s / %.2f s, sync %.2f s / %.2f s (writer held %.0f / %.0f ms), peaks %@ / %@",
                               fileReply.seconds["pass1"] ?? 0, fileReply.seconds["pass2"] ?? 0,
                               syncReply.seconds["pass1"] ?? 0, syncReply.seconds["pass2"] ?? 0,
                               (syncReply.seconds["pass1.lock"] ?? 0) * 1000, (syncReply.seconds["pass2.lock"] ?? 0) * 1000,
                               Report.formatBytes(filePeak), Report.formatBytes(syncPeak)))
        }
        problems.forEach { context.log("sync-pages: PROBLEM: \($0)") }

        func rate(_ implementation: String, _ key: String) -> Cell {
            guard let time = median(seconds[implementation]?[key] ?? []), time > 0 else { return Cell(note: "—") }
            return Cell(Double(count) / time)
        }
        var rows: [ResultRow] = []
        for (index, pass) in Self.passes.enumerated() {
            var row = ResultRow(workload: pass.label, unit: "rows/s", replica: rate("sync", pass.key))
            row.baselines = [
                BaselineCell(name: "importFile", cell: rate("file", pass.key), minimumRatio: 1 / 1.3),
                BaselineCell(name: "staged file", cell: rate("file", "staged.\(pass.key)")),
            ]
            if index == 0 {
                row.peakMemory = [
                    MemoryReading(name: "Replica", bytes: peaks["sync"] ?? 0, limit: context.quick ? nil : Self.memoryLimit),
                    MemoryReading(name: "importFile", bytes: peaks["file"] ?? 0),
                ]
                row.notes = [
                    String(format: "sync-pages: %@ people (%.0f MB of JSON) served by the mock server (memory store, "
                           + "its own child process) in %d pages of %@, synced by ReplicaClient over loopback as one sync "
                           + "session in a child process (its peak RSS shown); importFile reads the same objects from a "
                           + "file through the /people route in another child; pass 2 changes 1 %% of the rows, spread over "
                           + "every page; `staged file` is the same file through importChunks staged from the start "
                           + "(streamingPatience 0: a one-page sync session, parsed and staged, then merged), without HTTP or server; rates count every row of the collection; ",
                           Report.formatCount(count), Double(bytes) / 1e6, Self.pageCount, Report.formatCount(count / Self.pageCount))
                    + (runs > 1 ? "median of \(runs) runs." : "one run."),
                ] + problems.map { "sync-pages: PROBLEM: \($0)" }
            }
            rows.append(row)
        }
        let lock1 = median(seconds["sync"]?["pass1.lock"] ?? []).map { $0 * 1000 }
        let lock2 = median(seconds["sync"]?["pass2.lock"] ?? []).map { $0 * 1000 }
        let total1 = median(seconds["sync"]?["pass1"] ?? []).map { $0 * 1000 }
        rows.append(ResultRow(
            workload: "sync-pages, store writer held (pass 1)", unit: "ms", replica: Cell(lock1, note: lock2.map {
                String(format: "pass 2: %.0f ms", $0) + (total1.map { String(format: "; whole pass 1: %.0f ms", $0) } ?? "")
            }),
            notes: ["sync-pages: the writer is held only for the merge of the staged pages (one transaction: upserts, "
                    + "stale deletion, validators); the pages' transfer and parsing hold nothing."]))
        return rows
    }

    func runWorker(_ request: WorkerRequest) async throws -> WorkerReply {
        switch request.implementation {
        case "server": return try await SyncPagesServer.run(request)
        case "file": return try await Self.importFiles(request)
        case "sync": return try await Self.syncPages(request)
        default: throw BenchmarkError("unknown sync-pages implementation '\(request.implementation)'")
        }
    }

    /// Starts the server child, runs the sync child against it, stops the server.
    private func syncAgainstServer(files: [String], count: Int, directory: String,
                                   context: BenchmarkContext) async throws -> (WorkerReply, Int) {
        let control = (directory as NSString).appendingPathComponent("control")
        try FileManager.default.createDirectory(atPath: control, withIntermediateDirectories: true)
        let serverRequest = WorkerRequest(implementation: "server", parameters: [
            "control": control, "first": files[0], "second": files[1], "schema": Self.schemaPath,
        ])
        return try await SyncPagesServer.serving(workload: name, request: serverRequest, context: context) { port in
            let client = WorkerRequest(implementation: "sync", parameters: [
                "base": "http://127.0.0.1:\(port)", "control": control, "count": String(count),
                "database": (directory as NSString).appendingPathComponent("sync.sqlite"),
            ])
            return try context.runWorker(workload: name, request: client)
        }
    }

    /// The `file` child: `importFile` of both files through the `/people` route.
    private static func importFiles(_ request: WorkerRequest) async throws -> WorkerReply {
        let directory = try request.require("directory")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = (directory as NSString).appendingPathComponent("file.sqlite")
        let store = try Store(path: database, schema: try Schema(contentsOf: URL(fileURLWithPath: schemaPath)))
        let engine = try SQLiteReplica(store: store)
        // The same files through the staged path (a one-page sync session), without HTTP: what staging costs.
        let stagedStore = try Store(path: (directory as NSString).appendingPathComponent("staged.sqlite"),
                                    schema: try Schema(contentsOf: URL(fileURLWithPath: schemaPath)))
        let staged = try SQLiteReplica(store: stagedStore)
        var reply = WorkerReply()
        for (key, file) in [("pass1", try request.require("first")), ("pass2", try request.require("second"))] {
            var start = ContinuousClock.now
            let result = try await engine.importFile(file, into: .route(.get, "/people"))
            reply.seconds[key] = start.duration(to: .now).seconds
            reply.counts["\(key).changes"] = result.changes["Person"].map { $0.inserted.count + $0.updated.count + $0.deleted.count } ?? 0
            start = ContinuousClock.now
            // Staged from the start (no patience): what staging itself costs, as the HTTP sync stages.
            let chunked = try await staged.importChunks(FileChunks(path: file), into: .route(.get, "/people"), source: file,
                                                        options: SyncOptions(streamingPatience: 0))
            reply.seconds["staged.\(key)"] = start.duration(to: .now).seconds
            reply.seconds["staged.\(key).lock"] = chunked.writeLockDuration?.seconds ?? 0
        }
        reply.checksum = try await checksum(store)
        return reply
    }

    /// The `sync` child: two syncs of the paged collection, the server changing 1 % between them.
    private static func syncPages(_ request: WorkerRequest) async throws -> WorkerReply {
        guard let count = Int(try request.require("count")), let base = URL(string: try request.require("base")) else {
            throw BenchmarkError("sync-pages: bad count or base URL")
        }
        let control = try request.require("control")
        let store = try Store(path: try request.require("database"), schema: try Schema(contentsOf: URL(fileURLWithPath: schemaPath)))
        let engine = try SQLiteReplica(store: store)
        let transport = HTTPTransport()
        var configuration = ClientConfiguration(transport: transport, baseURLs: [.production: base])
        configuration.timeout = .seconds(600)
        let client = ReplicaClient(engine: engine, configuration: configuration)
        let path = "/people?_page=1&_limit=\(count / pageCount)"
        var reply = WorkerReply()
        for pass in passes {
            if pass.revision > 0 { try await SyncPagesServer.ask(control, "load-second") }
            let start = ContinuousClock.now
            let result = try await client.call(path)
            reply.seconds[pass.key] = start.duration(to: .now).seconds
            reply.seconds["\(pass.key).lock"] = result.sync.writeLockDuration?.seconds ?? 0
            reply.counts["\(pass.key).changes"] = result.changes["Person"].map { $0.inserted.count + $0.updated.count + $0.deleted.count } ?? 0
            reply.counts["\(pass.key).pages"] = result.pages
        }
        try await transport.shutdown()
        reply.checksum = try await checksum(store)
        return reply
    }

    /// A fingerprint of the people table, to check both children stored the same rows.
    static func checksum(_ store: Store) async throws -> String {
        try await store.database.read { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT count(*), sum(id), sum(numberOfKids), printf('%.3f', total(kilometersWalked)), sum(length(name)),
                       sum(unicode(substr(name, -1))) FROM people
                """)
            return row.map { "\($0[0] as Int64? ?? 0)/\($0[1] as Int64? ?? 0)/\($0[2] as Int64? ?? 0)/\($0[3] as String? ?? "")/"
                + "\($0[4] as Int64? ?? 0)/\($0[5] as Int64? ?? 0)" } ?? "empty"
        }
    }
}

/// A file's bytes in 64 KiB chunks, read as the consumer asks for them (back-pressure, bounded memory).
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    let path: String

    struct AsyncIterator: AsyncIteratorProtocol {
        let handle: FileHandle?

        mutating func next() async throws -> [UInt8]? {
            guard let handle, let data = try handle.read(upToCount: 1 << 16), !data.isEmpty else {
                try handle?.close()
                return nil
            }
            return [UInt8](data)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(handle: FileHandle(forReadingAtPath: path)) }
}
