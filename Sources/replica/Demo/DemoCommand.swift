import ArgumentParser
import Foundation
import Replica
import ReplicaHTTP
import ReplicaPostgres
import ReplicaServer

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "See the whole product work: a mock API, a sync into SQLite or PostgreSQL, a live view of changes.",
        discussion: """
            Starts the embedded mock server on a free loopback port with a generated blog (Schemas/blog.json: users, \
            posts, comments) and some latency; syncs it through the route table into a local SQLite file (the MANY \
            route /bootstrap, the nested scopes /users/:userID/posts and /posts/:postID/comments, the DATA route \
            /stats); then shows a live view of one user's posts, in sections by `published`, while another client \
            keeps changing them on the server and a periodic sync pulls the changes in. q or Ctrl-C ends it, or \
            --duration. When standard output is not a terminal it prints a summary instead of the view and ends by \
            itself (after 10 seconds unless --duration says otherwise).
            With --db postgres://USER@HOST:PORT/DB the replica is that PostgreSQL database (the blog's tables are \
            emptied first), and the live view follows it through LISTEN.
            While it runs, watch the same store from another terminal: replica watch --db PATH Post --sort -createdAt
            """
    )

    @Option(help: "Users to generate (each with 0-8 posts and 0-3 comments per post).")
    var users: Int = 1_000

    @Option(help: "The least latency of the mock server, in milliseconds (each response takes up to twice that).")
    var latency: Int = 20

    @Option(help: "Seconds between periodic syncs of the watched scope.")
    var every: Double = 1

    @Option(help: "Seconds between changes made on the server.")
    var changeEvery: Double = 0.5

    @Option(help: "End after this many seconds (default: on q or Ctrl-C on a terminal, 10 seconds otherwise).")
    var duration: Double?

    @Option(help: "The SQLite file to sync into (replaced), or a postgres:// URL (the blog's tables emptied). Default: replica-demo/blog.sqlite in the temporary directory.")
    var db: String?

    @Option(help: "Requests in flight while syncing the nested scopes.")
    var concurrency: Int = 16

    @Option(help: "The seed of the generated data.")
    var seed: UInt64 = 1

    func validate() throws {
        try OptionChecks.integer(users, option: "--users", in: 1...1_000_000)
        try OptionChecks.integer(latency, option: "--latency", in: 0...60_000, unit: "of milliseconds")
        try OptionChecks.seconds(every, option: "--every")
        try OptionChecks.seconds(changeEvery, option: "--change-every")
        if let duration { try OptionChecks.seconds(duration, option: "--duration") }
        try OptionChecks.integer(concurrency, option: "--concurrency", in: 1...1024)
    }

    func run() async throws {
        let interactive = Terminal.width(of: STDOUT_FILENO) != nil && Terminal.width(of: STDIN_FILENO) != nil
        let report = DemoReport(progress: Terminal.width(of: STDERR_FILENO) != nil)

        var schema = try Schema(json: Data(DemoSchema.blogJSON.utf8), file: "Schemas/blog.json")
        // The featured user's posts sync incrementally from the mock server's change feed.
        for index in schema.routes.indices where schema.routes[index].path == "/users/:userID/posts" {
            schema.routes[index].incremental = IncrementalSync(cursor: .header("X-Cursor"), items: JSONPointer("/items/posts"),
                                                               deleted: JSONPointer("/deleted"))
        }
        let generated = ContinuousClock.now
        let data = DemoData(userCount: users, seed: seed)
        let path = try databasePath()
        let serverFile = (Self.scratchDirectory as NSString).appendingPathComponent("server-\(getpid()).sqlite")
        try Self.remove(serverFile)
        defer { try? Self.remove(serverFile) }
        let server = try await DemoServer.start(schema: schema, data: data, latency: .milliseconds(latency), storePath: serverFile)
        let transport = HTTPTransport()
        do {
            report.line("replica demo: mock API at \(server.baseURL) (schema \(schema.name), latency \(latency)–\(latency * 2) ms)")
            report.line("  generated \(Format.integer(data.users.count)) users, \(Format.integer(data.posts.count)) posts, "
                        + "\(Format.integer(data.comments.count)) comments in \(DemoReport.seconds(since: generated))")
            try await run(server: server, transport: transport, schema: schema, data: data, path: path, report: report,
                          interactive: interactive)
        } catch {
            try? await transport.shutdown()
            await server.stop()
            throw error
        }
        try? await transport.shutdown()
        await server.stop()
    }

    private func run(server: MockServer, transport: HTTPTransport, schema: Schema, data: DemoData, path: String,
                     report: DemoReport, interactive: Bool) async throws {
        try await Self.openReplica(path, schema: schema).using { opened in
            try await run(server: server, transport: transport, data: data, opened: opened, report: report, interactive: interactive)
        }
    }

    /// Opens the demo's replica: a new SQLite file (the old one was removed), or the PostgreSQL
    /// database of a `postgres://` URL with the blog's tables emptied (in one transaction each:
    /// an empty, complete collection of every entity).
    private static func openReplica(_ path: String, schema: Schema) async throws -> OpenedStore {
        guard PostgresURL.isPostgres(path) else {
            return try OpenedStore.open(sqlite: Store(path: path, schema: schema))
        }
        let opened = try await OpenedStore.open(postgres: path, schema: schema)
        do {
            for entity in schema.entities {
                let session = try opened.store.session(.entity(entity.name), source: "emptying \(entity.name)",
                                                       options: SyncOptions(stalePolicy: .delete))
                _ = try await session.stage(body: Data("[]".utf8))
                _ = try await session.commit(complete: true)
            }
        } catch {
            await opened.close()
            throw error
        }
        return opened
    }

    private func run(server: MockServer, transport: HTTPTransport, data: DemoData, opened: OpenedStore, report: DemoReport,
                     interactive: Bool) async throws {
        let store = opened.store
        let path = store.location
        guard let base = URL(string: server.baseURL) else { throw CLIError("the mock server's URL \(server.baseURL) is invalid") }
        let client = ReplicaClient(store: store, configuration: ClientConfiguration(transport: transport, baseURLs: [.production: base]))

        // 1. The initial sync, route by route.
        let sync = DemoSync(client: client, report: report, concurrency: concurrency)
        let started = ContinuousClock.now
        try await sync.run("/bootstrap", kind: "MANY", paths: ["/bootstrap"])
        try await sync.run("/users/:userID/posts", kind: "scope", paths: data.users.indices.map { "/users/\($0 + 1)/posts" })
        let featured = DemoData.featuredUser
        try await sync.run("/posts/:postID/comments", kind: "scope", paths: data.featuredPosts.map { "/posts/\($0)/comments" })
        let stats = try await client.call("/stats")
        report.line("  GET /stats (DATA, not stored): \(stats.data.map { $0.serialized() } ?? "no body")")
        let totals = await sync.totals
        report.line("  synced \(Format.integer(totals.objects)) objects with \(Format.integer(totals.requests)) requests in "
                    + "\(DemoReport.seconds(since: started)) (\(totals.rate(since: started))) into \(path)")

        // 2. The live part: a sectioned result set on one user's posts, changes on the server,
        //    and a periodic sync pulling them in.
        let scope = "/users/\(featured)/posts"
        let query = try LiveQuery(path: scope, routes: opened.routes, sort: [.descending("createdAt")], sectionKey: "published")
        let results = try await LiveResultSet(store: store, query: query)
        defer { results.close() }
        let updates = results.updates()
        let counter = DemoDiffCounter()
        let mutator = DemoMutator(transport: transport, baseURL: base, posts: data.featuredPosts, seed: seed)
        let periodic = DemoPeriodicTally()
        let syncTask = client.keepSynced(scope, every: .checkedSeconds(every)) { periodic.record($0) }
        let mutatorTask = Task { await mutator.run(every: .checkedSeconds(changeEvery)) }
        let live = ContinuousClock.now
        let title = "replica demo · GET \(scope) · sections by published · newest first · syncing every \(Self.format(every)) s"

        if interactive {
            let entity = try store.schema.requireEntity("Post")
            let names = entity.attributes.map(\.name)
            let visible = ["id", "title", "published", "tags", "createdAt"].compactMap { names.firstIndex(of: $0) }
            var view = WatchTerminalView(title: title, columns: names, visibleColumns: visible)
            view.footer = { [counter] in
                let changes = periodic.snapshot
                return "server at \(server.baseURL) · \(changes.summary) · \(counter.snapshot.short) · \(path)"
            }
            let diffTask = Task { for await update in results.updates() { counter.record(update.diff) } }
            try await view.run(updates: updates, deadline: duration.map { .now + .checkedSeconds($0) })
            diffTask.cancel()
        } else {
            report.line("  live: watching GET \(scope) (\(updates.initial.count) posts in \(updates.initial.sections.count) sections "
                        + "by published) while the server changes")
            let diffTask = Task { for await update in updates { counter.record(update.diff) } }
            try? await Task.sleep(for: .checkedSeconds(duration ?? 10))
            diffTask.cancel()
        }
        syncTask.cancel()
        mutatorTask.cancel()
        _ = await mutatorTask.value

        // 3. The summary, and a check that the replica holds what the server holds.
        let tally = await mutator.tally
        let elapsed = DemoReport.seconds(since: live)
        let finalSync = try await client.call(scope)
        let local = try await store.count("Post", where: "userID = ?", arguments: [.integer(featured)])
        let remote = try await Self.count(of: scope, on: base, transport: transport)
        let periodicTally = periodic.snapshot
        report.line("  live for \(elapsed): \(tally.summary)")
        report.line("  \(periodicTally.summary); \(counter.snapshot.summary)")
        report.line("  GET \(scope) now: \(remote) posts on the server, \(local) in the replica"
                    + (local == remote ? " (in sync)" : " (the last sync answered \(finalSync.status))"))
        if !interactive { report.line("  try: replica query --db \(path) Post --where 'userID = ?' --arg \(featured) --sort -createdAt") }
    }

    /// The demo's own folder in the temporary directory (created when missing), without the server
    /// files of earlier demos that did not end normally.
    static let scratchDirectory: String = {
        let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("replica-demo")
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasPrefix("server-") {
            let digits = name.dropFirst("server-".count).prefix { $0.isNumber }
            guard let pid = pid_t(digits), pid != getpid(), kill(pid, 0) != 0 else { continue }
            try? FileManager.default.removeItem(atPath: (directory as NSString).appendingPathComponent(name))
        }
        return directory
    }()

    /// The database: `--db`, or `blog.sqlite` in ``scratchDirectory``; any old file is removed.
    private func databasePath() throws -> String {
        let path = db ?? (Self.scratchDirectory as NSString).appendingPathComponent("blog.sqlite")
        if PostgresURL.isPostgres(path) { return path }
        try Self.remove(path)
        return path
    }

    /// Removes a SQLite file and its WAL and shared-memory files, when present.
    static func remove(_ path: String) throws {
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            do {
                try FileManager.default.removeItem(atPath: path + suffix)
            } catch {
                throw CLIError("cannot replace \(path + suffix): \(error.localizedDescription)")
            }
        }
    }

    /// The number of objects the server lists at `path`.
    private static func count(of path: String, on base: URL, transport: HTTPTransport) async throws -> Int {
        let response = try await transport.send(ClientRequest(method: .get, url: base.appendingPathComponent(String(path.dropFirst()))))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        let body = try JSONValue(parsing: bytes)
        guard response.status == 200, case .array(let objects) = body["posts"] ?? body else {
            throw CLIError("GET \(path): HTTP \(response.status), not a list of posts")
        }
        return objects.count
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
    }
}
