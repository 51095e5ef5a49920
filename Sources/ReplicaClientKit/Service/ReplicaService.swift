import Foundation
import Logging
import ReplicaCore
import ServiceLifecycle

/// A replica kept live inside a service, as a swift-service-lifecycle `Service`: it owns the
/// periodic syncs of its paths, the push streams of their routes (``Route/push``), the polling
/// for other processes' commits, and the store's connections.
///
/// Each path syncs at once, then every `interval` (backing off exponentially, with jitter, up to
/// 32 intervals, while it fails); a push event or ``ReplicaClient/poke(_:)`` that names it syncs
/// it sooner. A sync is incremental when the route declares it (``Route/incremental``).
///
/// On graceful shutdown (SIGTERM under a `ServiceGroup`) it stops scheduling, lets a sync under
/// way commit (or, if the group cancels it, roll back: never half), closes the push streams,
/// and closes the store.
///
/// ```swift
/// let service = try ReplicaService(client: client, syncs: [.init("/people", every: .seconds(30))])
/// let group = ServiceGroup(configuration: .init(services: [service], gracefulShutdownSignals: [.sigterm, .sigint],
///                                               logger: logger))
/// Task { for await status in service.statuses() { logger.info("\(status)") } }
/// try await group.run()
/// ```
public final class ReplicaService: Service, Sendable {
    /// One path the service keeps synced.
    public struct Sync: Sendable {
        /// The path (`/people`, `/users/7/posts`), with the route's variables filled.
        public var path: String
        /// The time between syncs.
        public var interval: Duration
        /// Parameters of each call (query string).
        public var params: [String: Parameter]
        /// Headers of each call, over the schema's.
        public var headers: HeaderFields
        /// Options of each call.
        public var options: SyncOptions

        /// Syncs `path` every `interval`.
        ///
        /// ```swift
        /// ReplicaService.Sync("/people", every: .seconds(30))
        /// ```
        public init(_ path: String, every interval: Duration, params: [String: Parameter] = [:],
                    headers: HeaderFields = HeaderFields(), options: SyncOptions = SyncOptions()) {
            self.path = path
            self.interval = interval
            self.params = params
            self.headers = headers
            self.options = options
        }
    }

    /// How the service sends the store's outbox (local writes, ``ReplicaStore/saveLocally(_:_:)``).
    public struct Outbox: Sendable {
        /// The time between pushes while nothing wakes the sender (a local write does).
        public var interval: Duration
        /// How many rows' mutations are sent at once.
        public var concurrency: Int

        /// Pushes every `interval`, and at once after each local write.
        ///
        /// ```swift
        /// ReplicaService.Outbox(every: .seconds(10), concurrency: 8)
        /// ```
        public init(every interval: Duration = .seconds(5), concurrency: Int = 4) {
            self.interval = interval
            self.concurrency = concurrency
        }
    }

    /// The client whose store the service keeps synced.
    public let client: ReplicaClient
    /// The synced paths.
    public let syncs: [Sync]
    private let push: Bool
    private let outbox: Outbox?
    /// Wakes the sender before its timer: a commit (a local write among them).
    let sendWaker = Waker()
    let outboxBoard = OutboxBoard()
    private let externalChanges: Duration?
    private let closesStore: Bool
    let logger: Logger
    private let onResult: (@Sendable (String, Result<CallResult, any Error>) -> Void)?
    let board: StatusBoard
    private let wakers: [Waker]
    private let stopping = Locked(false)

    /// Creates the service; ``run()`` starts it.
    ///
    /// ```swift
    /// let service = try ReplicaService(client: client, syncs: [.init("/people", every: .seconds(30))],
    ///                                  onResult: { path, result in print(path, result) })
    /// ```
    ///
    /// - Parameters:
    ///   - client: The client (and its store) to keep synced.
    ///   - syncs: The paths and their intervals.
    ///   - push: Whether to follow the push streams the synced paths' routes declare.
    ///   - outbox: How to send the store's outbox (``ReplicaClient/push(concurrency:)``): every
    ///     interval, at once after a commit, backing off as syncs do while the API cannot be
    ///     reached; `nil` not to send it.
    ///   - externalChanges: How often an SQLite store looks for other processes' commits (its
    ///     observers and live result sets then hear of them); `nil` not to. PostgreSQL hears them
    ///     through `LISTEN`.
    ///   - closesStore: Whether the service closes the store when it stops (a PostgreSQL replica's
    ///     connections).
    ///   - logger: Where failures and push reconnections are logged.
    ///   - onResult: Called after each sync with its path and outcome.
    /// - Throws: ``SyncError`` `.noRoute` naming a path no GET route matches.
    public init(client: ReplicaClient, syncs: [Sync], push: Bool = true, outbox: Outbox? = Outbox(),
                externalChanges: Duration? = .milliseconds(500),
                closesStore: Bool = true, logger: Logger = Logger(label: "replica.service"),
                onResult: (@Sendable (String, Result<CallResult, any Error>) -> Void)? = nil) throws {
        for sync in syncs {
            let path = String(sync.path.split(separator: "?", maxSplits: 1).first ?? "")
            do {
                _ = try client.store.routes.resolve(.get, path)
            } catch {
                throw SyncError(.noRoute, "\(sync.path): no GET route to keep synced", source: sync.path, underlying: error)
            }
        }
        self.client = client
        self.syncs = syncs
        self.push = push
        self.outbox = outbox
        self.externalChanges = externalChanges
        self.closesStore = closesStore
        self.logger = logger
        self.onResult = onResult
        self.board = StatusBoard(paths: syncs.map(\.path))
        self.wakers = syncs.map { _ in Waker() }
    }

    /// The statuses of `path`: its current one first, then one each time it changes, until the
    /// service stops.
    ///
    /// ```swift
    /// for await status in service.status(of: "/people") where status.consecutiveFailures > 3 { alert(status) }
    /// ```
    public func status(of path: String) -> AsyncStream<SyncStatus> { board.stream(path) }

    /// The statuses of every synced path, as ``status(of:)``.
    public func statuses() -> AsyncStream<SyncStatus> { board.stream(nil) }

    /// The current status of `path`, or `nil` when the service does not sync it.
    public func currentStatus(of path: String) -> SyncStatus? { board.current(path) }

    /// The push streams of the synced paths' routes, each with the indexes of the syncs it feeds.
    var pushSources: [(events: String, syncs: [Int])] {
        guard push else { return [] }
        var sources: [String: [Int]] = [:]
        for (index, sync) in syncs.enumerated() {
            let path = String(sync.path.split(separator: "?", maxSplits: 1).first ?? "")
            if let events = (try? client.store.routes.resolve(.get, path))?.entry.route.push?.events {
                sources[events, default: []].append(index)
            }
        }
        return sources.keys.sorted().map { ($0, sources[$0] ?? []) }
    }

    /// Runs until graceful shutdown or cancellation; see the type's description.
    public func run() async throws {
        let monitor = externalChanges.map { client.store.detectExternalChanges(every: $0) }
        let registrations = zip(syncs, wakers).map { client.pokes.register($0.0.path, $0.1) }
        let sendWaker = self.sendWaker
        let commits = outbox == nil ? nil : await client.store.addObserver(for: nil, queue: DispatchQueue(label: "replica.service.outbox")) { _ in
            sendWaker.poke()
        }
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { listeners in
                for source in pushSources {
                    listeners.addTask { await self.follow(source.events, syncs: source.syncs) }
                }
                await withTaskGroup(of: Void.self) { loops in
                    for index in syncs.indices {
                        loops.addTask { await self.loop(index) }
                    }
                    if let outbox {
                        loops.addTask { await self.send(outbox) }
                    }
                }
                listeners.cancelAll()
            }
        } onGracefulShutdown: {
            self.stopping.withLock { $0 = true }
            for waker in self.wakers { waker.poke() }
            sendWaker.poke()
        }
        if let commits { client.store.removeObserver(commits) }
        outboxBoard.finish()
        for registration in registrations { client.pokes.unregister(registration) }
        monitor?.stop()
        board.finish()
        if closesStore { await client.store.close() }
    }

    var isStopping: Bool { stopping.withLock { $0 } || Task.isCancelled }

    /// Syncs one path until the service stops.
    private func loop(_ index: Int) async {
        let sync = syncs[index]
        let waker = wakers[index]
        var failures = 0
        while !isStopping {
            board.update(sync.path) { $0.phase = .syncing; $0.nextAttempt = nil }
            let began = Date()
            let clock = ContinuousClock()
            let start = clock.now
            let outcome: Result<CallResult, any Error>
            do {
                outcome = .success(try await client.call(sync.path, params: sync.params, headers: sync.headers, options: sync.options))
            } catch {
                outcome = .failure(error)
            }
            // Cancelled under way: the call rolled back; nothing to report.
            if Task.isCancelled { break }
            let duration = start.duration(to: clock.now)
            switch outcome {
            case .success(let result):
                failures = 0
                board.update(sync.path) { status in
                    status.lastSuccess = began
                    status.lastOutcome = SyncStatus.Outcome(result, duration: duration)
                    status.consecutiveFailures = 0
                }
            case .failure(let error):
                failures += 1
                logger.warning("sync \(sync.path) failed (\(failures) in a row): \(error)")
                board.update(sync.path) { status in
                    status.lastError = SyncStatus.Failure(date: Date(), message: String(describing: error),
                                                          httpStatus: (error as? ClientError)?.status)
                    status.consecutiveFailures = failures
                }
            }
            onResult?(sync.path, outcome)
            if isStopping { break }
            let factor = failures == 0 ? 1.0 : min(32, pow(2, Double(failures - 1))) * Double.random(in: 1...1.5)
            var delay = sync.interval * factor
            // A 429 or 503 saying when to come back: not before (its Retry-After, at most an hour).
            if case .failure(let error) = outcome, let wait = (error as? ClientError)?.retryAfter { delay = max(delay, wait) }
            board.update(sync.path) { status in
                status.phase = .waiting
                status.nextAttempt = Date().addingTimeInterval(Self.seconds(delay))
            }
            await waker.wait(upTo: delay)
        }
        board.update(sync.path) { $0.phase = .stopped; $0.nextAttempt = nil }
    }

    /// Follows one push stream: each event wakes the syncs whose paths it names (all of them
    /// when it names none), and so does every connection: what changed before the stream was
    /// connected (after a sync's cursor, or while it was down) is synced then.
    private func follow(_ events: String, syncs indexes: [Int]) async {
        let paths = indexes.map { syncs[$0].path }
        let wakers = indexes.map { self.wakers[$0] }
        let logger = self.logger
        let stream = client.events(events, connection: { connected in
            if connected {
                // Events sent before this connection are not heard: catch up with one sync.
                for waker in wakers { waker.poke() }
            } else {
                logger.info("push stream \(events) dropped; reconnecting")
            }
        })
        for await event in stream {
            let named = event.paths
            for (path, waker) in zip(paths, wakers) where named.isEmpty || named.contains(where: { PokeBoard.affects($0, path) }) {
                waker.poke()
            }
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
