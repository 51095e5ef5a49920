import ArgumentParser
import Foundation
import Logging
import Replica
import ReplicaHTTP
import ServiceLifecycle

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Sync API paths into the store over HTTP.",
        discussion: """
            Each path is fetched from the base URL and synced through its route (pages followed, stale rows \
            deleted as the route says, conditional requests with ETag/Last-Modified; incrementally with tombstones \
            where the route declares "incremental"). With --every the paths are kept synced as a service (pushed \
            by the routes' event streams too) that prints a status line after each sync, until SIGTERM or Ctrl-C \
            (exit 0); with --metrics-port too, their metrics are served at http://127.0.0.1:PORT/metrics in \
            Prometheus' text format.
            The store is an SQLite file or a PostgreSQL database (--db postgres://USER@HOST:PORT/DB), where the \
            validators are shared by every service syncing into it.
            Example: replica sync --db people.sqlite --schema Schemas/people.json --base-url http://127.0.0.1:8888 /people /cars
            """
    )

    @Option(help: "The SQLite database file (created when missing; needs --schema then), or a postgres:// URL.")
    var db: String

    @Option(help: "The schema file; without it the schema recorded in the database is used.")
    var schema: String?

    @Option(name: .customLong("base-url"), help: "The API's base URL.")
    var baseURL: String

    @Option(name: .customLong("header"), help: "A header sent with every request, 'Name: value'; it overrides the schema's.")
    var headers: [String] = []

    @Option(help: "Keep syncing every SECONDS until interrupted.")
    var every: Double?

    @Option(name: .customLong("metrics-port"),
            help: "With --every: serve Prometheus metrics at http://127.0.0.1:PORT/metrics (0 picks a free port).")
    var metricsPort: Int?

    @Option(help: "Seconds before a request times out, to its response head (the body has --idle-timeout and --body-timeout).")
    var timeout: Double = 30

    @Option(name: .customLong("allow-host"),
            help: "A host a next page link or a redirect may lead to (host, host:port, an origin, *.domain or *); it gets no --header. Repeatable.")
    var allowedHosts: [String] = []

    @Option(name: .customLong("idle-timeout"), help: "Seconds a response body may send no byte before the sync fails.")
    var idleTimeout: Double = 60

    @Option(name: .customLong("body-timeout"), help: "Seconds one request may take, head and whole body, before the sync fails.")
    var bodyTimeout: Double = 1800

    @Option(name: .customLong("max-body"), help: "The largest response body, decompressed (e.g. 512M, 2G).")
    var maxBody: String = "1G"

    @Option(name: .customLong("max-staging"), help: "The most response bytes one sync takes in, all its pages together (e.g. 8G).")
    var maxStaging: String = "4G"

    @Option(name: .customLong("busy-timeout"),
            help: "Seconds a write waits while another process writes to the database before that sync fails (writing nothing).")
    var busyTimeout: Double = StoreOptions().busyTimeout

    @OptionGroup var mapping: MappingChecks

    @Option(name: .customLong("unfollowed-pages"),
            help: "fail (write nothing), or warn (write the pages read, delete nothing), when the last page says the collection goes on (has_more, a next cursor or link, a total above what was read) and the route's pagination found no next page.")
    var unfollowedPages: UnfollowedPagesPolicy = .fail

    @Option(name: .customLong("max-pages"),
            help: "The most pages one path's sync reads; a sync stopped there writes what it read and deletes nothing.")
    var maxPages: Int?

    @Option(name: .customLong("concurrent-pages"),
            help: "Pages asked for ahead of the one being read when the pages to come are known (a total, a page count, a Link rel=\"last\"); they still commit in order.")
    var concurrentPages: Int = 4

    @Option(help: "Retries of a request answered 429 or 503 (after its Retry-After, or a backoff) or 403/429 with a used-up rate limit (at its reset); 0 fails at once.")
    var retries: Int = 3

    @Option(name: .customLong("max-wait"),
            help: "The longest wait in seconds for a Retry-After or a rate limit's reset; a later reset fails the path at once, naming it.")
    var maxWait: Double = 120

    @Argument(help: "API paths, e.g. /people /people/1/cars.")
    var paths: [String]

    func validate() throws {
        if paths.isEmpty { throw ValidationError("give at least one path") }
        if let every { try OptionChecks.seconds(every, option: "--every") }
        try OptionChecks.metricsPort(metricsPort, every: every)
        try OptionChecks.seconds(timeout, option: "--timeout")
        try OptionChecks.seconds(idleTimeout, option: "--idle-timeout")
        try OptionChecks.seconds(bodyTimeout, option: "--body-timeout")
        _ = try OptionChecks.byteSize(maxBody, option: "--max-body")
        _ = try OptionChecks.byteSize(maxStaging, option: "--max-staging")
        for host in allowedHosts where host.trimmingCharacters(in: .whitespaces).isEmpty || host.contains("/") && !host.contains("://") {
            throw ValidationError("--allow-host takes a host, host:port, an origin (https://host:port), *.domain or *, not '\(host)'")
        }
        try OptionChecks.busyTimeout(busyTimeout)
        if concurrentPages < 1 || concurrentPages > 64 {
            throw ValidationError("--concurrent-pages takes a number from 1 up to 64, not \(concurrentPages)")
        }
        if retries < 0 || retries > 100 { throw ValidationError("--retries takes a number from 0 up to 100, not \(retries)") }
        try OptionChecks.seconds(maxWait, option: "--max-wait")
        if let maxPages, maxPages < 1 || maxPages > 1_000_000_000 {
            throw ValidationError("--max-pages takes a number of pages from 1 up to 1000000000, not \(maxPages)")
        }
        for header in headers { _ = try OptionChecks.header(header) }
        guard let url = URL(string: baseURL), url.scheme == "http" || url.scheme == "https" else {
            throw ValidationError("--base-url must be an http or https URL")
        }
    }

    func run() async throws {
        try await MetricsEndpoint.serving(port: metricsPort) { try await syncPaths() }
    }

    /// Syncs the paths into the store, once or (`--every`) until interrupted.
    private func syncPaths() async throws {
        let created = CreatedFile.isNew(db)
        let (failed, synced) = try await CreatedFile.removingOnFailure(db) {
            try await OpenedStore.open(db: db, schema: schema, busyTimeout: busyTimeout).using { try await sync(into: $0) }
        }
        // A file this run created and no sync committed to: nothing is left behind.
        if created && !synced { CreatedFile.remove(db) }
        if failed { throw ExitCode.failure }
    }

    /// Syncs every path once (or keeps them synced with `--every`); returns whether any failed and whether any succeeded.
    private func sync(into opened: OpenedStore) async throws -> (failed: Bool, synced: Bool) {
        guard let base = URL(string: baseURL) else { throw CLIError("invalid --base-url \(baseURL)") }
        let transport = HTTPTransport()
        var configuration = ClientConfiguration(transport: transport, baseURLs: [.production: base])
        configuration.timeout = .checkedSeconds(timeout)
        configuration.allowedHosts = allowedHosts
        configuration.unfollowedPages = unfollowedPages
        if let maxPages { configuration.maxPages = maxPages }
        configuration.concurrentPages = concurrentPages
        if retries > 0 {
            var retry = RetryInterceptor(maxAttempts: retries + 1, maxRetryAfter: .checkedSeconds(maxWait))
            retry.retriesFailedConnections = false
            configuration.interceptors = [retry]
        }
        configuration.bodyLimits = BodyLimits(idleTimeout: .checkedSeconds(idleTimeout), deadline: .checkedSeconds(bodyTimeout),
                                              maxBytes: try OptionChecks.byteSize(maxBody, option: "--max-body"))
        // The call's own headers: they override the schema's (top level and routes).
        var callHeaders = HeaderFields()
        for header in headers {
            let (name, value) = try OptionChecks.header(header)
            callHeaders[name] = value
        }
        let client = ReplicaClient(store: opened.store, configuration: configuration)
        var options = SyncOptions(busyTimeout: busyTimeout)
        mapping.apply(to: &options)
        options.maxStagingBytes = try OptionChecks.byteSize(maxStaging, option: "--max-staging")
        if let every { return try await keepSynced(client, opened: opened, every: every, headers: callHeaders, options: options) }
        // Local writes first: the pull then reads the API with them applied.
        var failed = await Self.pushOutbox(client)
        var synced = false
        let warned = Locked(Set<String>())
        for path in paths {
            do {
                // Syncing needs a route (the client would answer a path without one ad hoc, syncing nothing).
                _ = try opened.routes.resolve(.get, String(path.split(separator: "?", maxSplits: 1).first ?? ""))
                let result = try await client.call(path, headers: callHeaders, options: options)
                synced = true
                // Unbuffered: each line shows at once and in order with the warnings, in a pipe too.
                Output.write(Self.line(path, result, entityOrder: opened.store.schema.entities.map(\.name)) + "\n", to: .standardOutput)
                for line in Self.warnings(result, path: path, mapping: opened.mapping, warned: warned) { printWarning(line) }
            } catch {
                failed = true
                printError("\(path): \(error)")
            }
        }
        return (failed, synced)
    }

    /// `--every`: the paths kept synced by a ``ReplicaService`` under a `ServiceGroup` until SIGTERM
    /// or SIGINT; each sync prints its line and the path's status line. Exits 0 once stopped.
    private func keepSynced(_ client: ReplicaClient, opened: OpenedStore, every: Double,
                            headers: HeaderFields, options: SyncOptions) async throws -> (failed: Bool, synced: Bool) {
        var syncs: [ReplicaService.Sync] = []
        for path in paths {
            do {
                _ = try opened.routes.resolve(.get, String(path.split(separator: "?", maxSplits: 1).first ?? ""))
                syncs.append(ReplicaService.Sync(path, every: .checkedSeconds(every), headers: headers, options: options))
            } catch {
                printError("\(path): \(error)")
            }
        }
        guard !syncs.isEmpty else { return (true, false) }
        var logger = Logger(label: "replica.sync")
        logger.logLevel = .error
        let entityOrder = opened.store.schema.entities.map(\.name)
        let mapping = opened.mapping
        // A key is warned about once per route per process; keys appearing later are warned then.
        let warned = Locked(Set<String>())
        let service = try ReplicaService(client: client, syncs: syncs, externalChanges: nil, closesStore: false, logger: logger) {
            path, outcome in
            switch outcome {
            case .success(let result):
                // Unbuffered: each line shows at once and in order with the warnings, in a pipe too.
                Output.write(Self.line(path, result, entityOrder: entityOrder) + "\n", to: .standardOutput)
                for line in Self.warnings(result, path: path, mapping: mapping, warned: warned) { printWarning(line) }
            case .failure(let error):
                printError("\(path): \(error)")
            }
        }
        let statusLines = Task {
            for await status in service.statuses() where status.phase == .waiting {
                Output.write(status.description + "\n", to: .standardOutput)
            }
        }
        // Local writes are pushed before the first sync, and every --every seconds beside the syncs.
        _ = await Self.pushOutbox(client)
        let pushes = PushLoop(client: client, every: every, concurrency: 4, prefix: "push: ", waitsFirst: true)
        var configuration = ServiceGroupConfiguration(services: [service, pushes], gracefulShutdownSignals: [.sigterm, .sigint],
                                                      logger: logger)
        // A sync under way gets 3 s to commit; then it is cancelled (rolled back whole) and the command exits.
        configuration.maximumGracefulShutdownDuration = .seconds(3)
        let group = ServiceGroup(configuration: configuration)
        try await group.run()
        await statusLines.value
        return (false, true)
    }

    /// Pushes the outbox when it holds pending mutations and prints one line (`push: 1 confirmed,
    /// 0 rejected, 0 still pending`), and an `Error:` line per mutation rejected or still pending;
    /// `true` when one was. A push that cannot reach the API leaves the pull to report its own error.
    static func pushOutbox(_ client: ReplicaClient) async -> Bool {
        do {
            guard try await !client.store.outbox(.pending).isEmpty else { return false }
            let result = try await client.push()
            PushReport.print(result, prefix: "push: ")
            return PushReport.status(result) != 0
        } catch {
            printError("push: \(error)")
            return true
        }
    }

    /// The warnings a result's ignored keys call for, each key once per route per process.
    static func warnings(_ result: CallResult, path: String, mapping: SchemaMapping, warned: Locked<Set<String>>) -> [String] {
        let fresh = result.sync.ignoredKeys.filter { key in
            warned.withLock { $0.insert([result.route, key.kind.rawValue, key.entity ?? "", key.key].joined(separator: "\u{0}")).inserted }
        }
        let named = result.sync.ignoredKeys.filter { $0.kind.dropsValue }
            .reduce(0) { $0 + $1.count }
        let unnamed = max(0, result.sync.ignoredKeyCount - named)
        let unnamedFresh = unnamed > 0 && warned.withLock { $0.insert(result.route + "\u{0}unnamed").inserted }
        return KeyWarnings.lines(fresh, unnamed: unnamedFresh ? unnamed : 0, mapping: mapping, source: path)
    }

    /// `/people: 200, inserted 2, updated 0, deleted 0 (2 objects)`, or with several entities changed
    /// `/users: 200, User: inserted 2 · Post: inserted 1 (3 objects)`.
    static func line(_ path: String, _ result: CallResult, entityOrder: [String]) -> String {
        if result.notModified { return "\(path): 304 not modified" }
        let counts = ChangeSummary.counts(result.changes, entityOrder: entityOrder).text
        var pages = result.pages > 1 ? ", \(result.pages) pages" : ""
        if result.unchangedPages > 0 { pages += ", \(result.unchangedPages) not modified" }
        if let more = result.unfollowedPages {
            pages += ", the last page says there is more (\(more)) that the route's pagination did not follow: nothing deleted"
        } else if result.isTruncated {
            pages += ", stopped at the page limit after \(result.pages) page\(result.pages == 1 ? "" : "s"): nothing deleted"
        }
        return "\(path): \(result.status), \(counts) (\(result.sync.objectCount) objects\(pages))"
    }
}

extension UnfollowedPagesPolicy: ExpressibleByArgument {}
