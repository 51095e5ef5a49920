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
/// The same syncs run against three upstreams, each in its own child process: the mock server;
/// a fast static upstream (``StaticPagesServer``: the pages pre-rendered in memory, what a CDN
/// or a cache in front of an API serves), where the sync is the client's work alone; and the
/// mock server with page 5's body stalling for a second (pass 1 only), where the session must
/// let go of the writer and stage.
///
/// Targets: against the static upstream, each pass at least 0.9× the file import's rate;
/// against the mock server, at least 0.77× (at most 1.3× its time: the server builds every page
/// on the same two cores); the sync child peaks at 100 MB or less; with the stalling page, the
/// writer is held for the merge only (less than the stall), and the rows are the same.
///
/// Each upstream also gets a row of CPU time per pass: the sync child's, the upstream child's in
/// the same interval, and the file import's. All of them run on the same cores, so where the
/// sync needs more CPU than the file import (receiving the pages, keeping their bytes for a
/// pause) the row says how much, and a pass that misses its ratio shows whether the cores were
/// the limit.
struct SyncPagesWorkload: Workload {
    let name = "sync-pages"
    let summary = "a 10-page collection over HTTP as one sync session (static upstream, mock server, a stalling page) vs importFile of the same objects: rows/s, write-lock time, peak RSS"

    static let memoryLimit = 100_000_000
    static let pageCount = 10

    /// The passes: key, label, file revision, changed rows per 100.
    static let passes: [(key: String, label: String, revision: Int)] = [
        ("pass1", "pass 1: 10 pages into an empty store", 0),
        ("pass2", "pass 2: 1 % of rows changed on every page", 1),
    ]

    /// The upstreams: key, label, the least rate against `importFile`, and whether pass 2 runs.
    static let upstreams: [(key: String, label: String, target: Double?, secondPass: Bool)] = [
        ("static", "sync-pages, static upstream", 0.9, true),
        ("mock", "sync-pages, mock server", 1 / 1.3, true),
        ("stall", "sync-pages, mock server, page 5 stalls 1 s", nil, false),
    ]

    /// The repository's `Schemas/people.json`, found from this source file's path.
    static let schemaPath: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<6 { url.deleteLastPathComponent() }   // file, Sync, Workloads, replica-bench, Sources, Benchmarks
        return url.appendingPathComponent("Schemas/people.json").path
    }()

    func run(in context: BenchmarkContext) async throws -> [ResultRow] {
        let count = context.quick ? 100_000 : 1_000_000
        // Five runs by default: each pass is 1-2 s on two shared cores, where one slow minute moves a
        // run by a third; the median of five is what a ratio of two such figures needs.
        let runs = context.runs ?? 5
        let files = [0, 1].map { (context.scratchDirectory as NSString).appendingPathComponent("people-\($0).json") }
        var bytes = 0
        for (revision, path) in files.enumerated() { bytes = try PeopleData(count: count, revision: revision).writeJSON(to: path) }
        context.log(String(format: "sync-pages: wrote 2 files of %@ people, %.1f MB each",
                           Report.formatCount(count), Double(bytes) / 1e6))

        var seconds: [String: [String: [Double]]] = [:]
        var peaks: [String: Int] = [:]
        var stagedPasses: [String: Int] = [:]
        var problems: [String] = []
        for run in 1...runs {
            let directory = (context.scratchDirectory as NSString).appendingPathComponent("sync-pages-\(run)")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            context.log("sync-pages: run \(run)/\(runs), importFile…")
            let (fileReply, filePeak) = try context.runWorker(workload: name, request: WorkerRequest(
                implementation: "file", parameters: ["first": files[0], "second": files[1],
                                                     "directory": (directory as NSString).appendingPathComponent("file")]))
            for (key, value) in fileReply.seconds { seconds["file", default: [:]][key, default: []].append(value) }
            peaks["file"] = max(peaks["file"] ?? 0, filePeak)
            context.log(String(format: "sync-pages: file %.2f s / %.2f s, staged file %.2f s / %.2f s (writer held %.0f / %.0f ms)",
                               fileReply.seconds["pass1"] ?? 0, fileReply.seconds["pass2"] ?? 0,
                               fileReply.seconds["staged.pass1"] ?? 0, fileReply.seconds["staged.pass2"] ?? 0,
                               (fileReply.seconds["staged.pass1.lock"] ?? 0) * 1000, (fileReply.seconds["staged.pass2.lock"] ?? 0) * 1000))
            for upstream in Self.upstreams {
                context.log("sync-pages: run \(run)/\(runs), \(upstream.key) upstream and ReplicaClient…")
                let (syncReply, syncPeak) = try await syncAgainstServer(upstream: upstream.key, files: files, count: count,
                                                                        directory: directory, context: context)
                for (key, value) in syncReply.seconds { seconds[upstream.key, default: [:]][key, default: []].append(value) }
                peaks[upstream.key] = max(peaks[upstream.key] ?? 0, syncPeak)
                for pass in Self.passes where pass.revision == 0 || upstream.secondPass {
                    let expected = pass.revision == 0 ? count : count / 100
                    for (implementation, reply) in [("importFile", fileReply), (upstream.key, syncReply)] {
                        let changes = reply.counts["\(pass.key).changes"] ?? -1
                        if changes != expected {
                            problems.append("\(implementation) \(pass.key): \(changes) changes, expected \(expected)")
                        }
                    }
                    let staged = syncReply.counts["\(pass.key).staged"] ?? 0
                    // The stalling page must be staged; the static upstream never pauses. (The mock server
                    // may: a page it is slow to build is a pause, and the session stages as it should.)
                    if upstream.key == "stall" && staged == 0 { problems.append("stall \(pass.key): written without staging") }
                    if upstream.key == "static" && staged == 1 { problems.append("static \(pass.key): staged after a pause") }
                    stagedPasses[upstream.key, default: 0] += staged
                }
                if upstream.secondPass, fileReply.checksum != syncReply.checksum {
                    problems.append("the \(upstream.key) sync stored \(syncReply.checksum ?? "?"), the file import \(fileReply.checksum ?? "?")")
                }
                context.log(String(format: "sync-pages: %@ sync %.2f s / %.2f s (writer held %.0f / %.0f ms), peak %@",
                                   upstream.key, syncReply.seconds["pass1"] ?? 0, syncReply.seconds["pass2"] ?? 0,
                                   (syncReply.seconds["pass1.lock"] ?? 0) * 1000, (syncReply.seconds["pass2.lock"] ?? 0) * 1000,
                                   Report.formatBytes(syncPeak)))
            }
        }
        problems.forEach { context.log("sync-pages: PROBLEM: \($0)") }

        func rate(_ implementation: String, _ key: String) -> Cell {
            guard let time = median(seconds[implementation]?[key] ?? []), time > 0 else { return Cell(note: "—") }
            return Cell(Double(count) / time)
        }
        var rows: [ResultRow] = []
        let people = Report.formatCount(count)
        for upstream in Self.upstreams {
            for pass in Self.passes where pass.revision == 0 || upstream.secondPass {
                var row = ResultRow(workload: "\(upstream.label), \(pass.label)", unit: "rows/s", replica: rate(upstream.key, pass.key))
                row.baselines = [
                    BaselineCell(name: "importFile", cell: rate("file", pass.key), minimumRatio: upstream.target),
                    BaselineCell(name: "staged file", cell: rate("file", "staged.\(pass.key)")),
                ]
                if pass.revision == 0 {
                    row.peakMemory = [
                        MemoryReading(name: "Replica", bytes: peaks[upstream.key] ?? 0, limit: context.quick ? nil : Self.memoryLimit),
                        MemoryReading(name: "importFile", bytes: peaks["file"] ?? 0),
                    ]
                }
                rows.append(row)
            }
            let lock1 = median(seconds[upstream.key]?["pass1.lock"] ?? [])
            let total1 = median(seconds[upstream.key]?["pass1"] ?? [])
            var held = ResultRow(workload: "\(upstream.label), store writer held (pass 1)", unit: "ms", replica: Cell(lock1.map { $0 * 1000 }, note: [
                total1.map { String(format: "whole pass 1: %.0f ms", $0 * 1000) },
                upstream.secondPass ? median(seconds[upstream.key]?["pass2.lock"] ?? []).map { String(format: "pass 2: %.0f ms", $0 * 1000) } : nil,
                "staged after a pause in \(stagedPasses[upstream.key] ?? 0) of \(runs * (upstream.secondPass ? 2 : 1)) passes",
            ].compactMap { $0 }.joined(separator: "; ")))
            rows.append(cpuRow(upstream: upstream, seconds: seconds))
            if upstream.key == "stall", let merge = median(seconds["file"]?["staged.pass1.lock"] ?? []) {
                // The merge only: about what the staged file's merge of the same rows holds it for.
                held.targets = [Target(description: String(format: "≤ 1.25× the staged file's merge (%.0f ms)", merge * 1000),
                                       met: lock1.map { $0 <= merge * 1.25 })]
            }
            rows.append(held)
        }
        rows[0].notes = [
            String(format: "sync-pages: %@ people (%.0f MB of JSON) in %d pages of %@, synced by ReplicaClient (AsyncHTTPClient) over "
                   + "loopback as one sync session, in a child process of its own (its peak RSS shown), from three upstreams, each "
                   + "in a child process: a static upstream (Hummingbird answering every page with bytes rendered in memory before "
                   + "it listens, with an ETag and a Link header: the client's work alone), the mock server (memory store, building "
                   + "each page as it is asked for) and the mock server with page 5's body stalling for 1 s after its first 4 KiB "
                   + "(pass 1 only); importFile reads the same objects from a file through the /people route in another child; "
                   + "pass 2 changes 1 %% of the rows, spread over every page; `staged file` is the same file through importChunks "
                   + "staged from the start (streamingPatience 0: a one-page sync session, parsed and staged, then merged), without "
                   + "HTTP or server; rates count every row of the collection; ",
                   people, Double(bytes) / 1e6, Self.pageCount, Report.formatCount(count / Self.pageCount))
            + (runs > 1 ? "median of \(runs) runs." : "one run."),
            "sync-pages: the session writes each page into one open transaction as it is parsed and asks for the next page "
            + "while it does (the writer is held for the whole sync, as by a file import); a page that keeps the writer waiting "
            + "longer than SyncOptions.streamingPatience (0.1 s) rolls it back, and the pages are staged and merged in one short "
            + "transaction at the end (the stalling upstream's writer row).",
            "sync-pages: the CPU rows give every thread's user + system time while each pass ran: the sync child's (its value), "
            + "the upstream child's in the same interval (read from /proc) and the importFile child's; the children share the "
            + "machine's cores, so a sync that needs more CPU than the file import is slower by about that much when the cores are busy.",
        ] + problems.map { "sync-pages: PROBLEM: \($0)" }
        return rows
    }

    /// The CPU time of each pass: the sync child's (every thread's user + system time, while
    /// the call ran), the upstream child's in the same interval (where `/proc` tells), and the
    /// file import's. Both children share the machine's cores, so a pass that needs more CPU than
    /// the file import is slower by about that much once the cores are busy.
    private func cpuRow(upstream: (key: String, label: String, target: Double?, secondPass: Bool),
                        seconds: [String: [String: [Double]]]) -> ResultRow {
        func cpu(_ implementation: String, _ key: String) -> String? {
            median(seconds[implementation]?[key] ?? []).map { String(format: "%.2f s", $0) }
        }
        let passes = Self.passes.filter { $0.revision == 0 || upstream.secondPass }.map(\.key)
        let note = [
            passes.count > 1 ? cpu(upstream.key, "pass2.cpu").map { "pass 2: \($0)" } : nil,
            { () -> String? in
                let values = passes.compactMap { cpu(upstream.key, "\($0).upstream.cpu") }
                return values.count == passes.count ? "the upstream: " + values.joined(separator: " / ") : nil
            }(),
            { () -> String? in
                let values = passes.compactMap { cpu("file", "\($0).cpu") }
                return values.count == passes.count ? "importFile: " + values.joined(separator: " / ") : nil
            }(),
        ].compactMap { $0 }.joined(separator: "; ")
        return ResultRow(workload: "\(upstream.label), CPU time of the sync (pass 1)", unit: "s",
                         replica: Cell(median(seconds[upstream.key]?["pass1.cpu"] ?? []), note: note))
    }

    func runWorker(_ request: WorkerRequest) async throws -> WorkerReply {
        switch request.implementation {
        case "server": return try await SyncPagesServer.run(request)
        case "static": return try await StaticPagesServer.run(request)
        case "file": return try await Self.importFiles(request)
        case "sync": return try await Self.syncPages(request)
        default: throw BenchmarkError("unknown sync-pages implementation '\(request.implementation)'")
        }
    }

    /// Starts the server child, runs the sync child against it, stops the server.
    private func syncAgainstServer(upstream: String, files: [String], count: Int, directory: String,
                                   context: BenchmarkContext) async throws -> (WorkerReply, Int) {
        let control = (directory as NSString).appendingPathComponent("control-\(upstream)")
        try FileManager.default.createDirectory(atPath: control, withIntermediateDirectories: true)
        var parameters = ["control": control, "first": files[0], "second": files[1], "schema": Self.schemaPath, "count": String(count)]
        if upstream == "stall" { parameters["stall-page"] = "5" }
        let serverRequest = WorkerRequest(implementation: upstream == "static" ? "static" : "server", parameters: parameters)
        return try await SyncPagesServer.serving(workload: name, request: serverRequest, context: context) { port in
            let client = WorkerRequest(implementation: "sync", parameters: [
                "base": "http://127.0.0.1:\(port)", "control": control, "count": String(count),
                "database": (directory as NSString).appendingPathComponent("sync-\(upstream).sqlite"),
                "passes": upstream == "stall" ? "1" : "2",
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
            let cpu = CPUTime.ofThisProcess()
            let result = try await engine.importFile(file, into: .route(.get, "/people"))
            reply.seconds[key] = start.duration(to: .now).seconds
            reply.seconds["\(key).cpu"] = CPUTime.ofThisProcess() - cpu
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
        let upstream = SyncPagesServer.upstreamPID(control)
        for pass in passes.prefix(Int(request.parameters["passes"] ?? "2") ?? 2) {
            if pass.revision > 0 { try await SyncPagesServer.ask(control, "load-second") }
            let start = ContinuousClock.now
            let cpu = CPUTime.ofThisProcess()
            let upstreamCPU = upstream.flatMap(CPUTime.ofProcess)
            let result = try await client.call(path)
            reply.seconds[pass.key] = start.duration(to: .now).seconds
            reply.seconds["\(pass.key).cpu"] = CPUTime.ofThisProcess() - cpu
            if let before = upstreamCPU, let after = upstream.flatMap(CPUTime.ofProcess) {
                reply.seconds["\(pass.key).upstream.cpu"] = after - before
            }
            reply.seconds["\(pass.key).lock"] = result.sync.writeLockDuration?.seconds ?? 0
            reply.counts["\(pass.key).changes"] = result.changes["Person"].map { $0.inserted.count + $0.updated.count + $0.deleted.count } ?? 0
            reply.counts["\(pass.key).pages"] = result.pages
            reply.counts["\(pass.key).staged"] = result.sync.stagedAfterPause ? 1 : 0
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
