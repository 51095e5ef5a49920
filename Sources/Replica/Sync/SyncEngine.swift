import Foundation
import GRDB

/// What an import writes into: an entity (optionally inside a scope) or the route of a path.
public enum ImportTarget: Sendable, Hashable {
    /// A top-level array (or one object) of this entity; `scope` fills attributes objects lack
    /// and bounds stale-row deletion.
    case entity(String, scope: [String: AttributeValue] = [:])
    /// The response of this path, read as its route says (envelope, namespace, DATA, MANY).
    case route(HTTPMethod, String)
}

/// The sync engine: bytes in, one committed transaction and an exact change set out.
///
/// All writes go through GRDB's single writer (a serial background queue). Each response is
/// one transaction: any error — malformed JSON at byte N, an invalid object under the `fail`
/// policy, a constraint violation, cancellation — rolls it back whole. Parsing runs on its
/// own thread, overlapping with the writes. After commit, the change set is published to
/// change observers on their own queues.
///
/// ```swift
/// let store = try Store(path: "blog.sqlite", schema: schema)
/// let engine = try SyncEngine(store: store)
/// let result = try await engine.sync(.get, "/users/3/posts", body: responseData)
/// print(result.changes["Post"]?.inserted.count ?? 0)
/// ```
public final class SyncEngine: Sendable {
    /// The store written to.
    public let store: Store
    /// The schema's routes.
    public let routes: RouteTable
    /// The property maps of every entity.
    public let mapping: SchemaMapping
    let planner: RowPlanner
    /// Resolving targets and parsing responses: what every store's writer shares.
    package let frontEnd: SyncFrontEnd
    let observers = ChangeObservers()
    let sequence = SequenceCounter()

    /// Creates an engine writing into `store`.
    ///
    /// - Parameters:
    ///   - store: The store; its schema gives the entities and routes.
    ///   - transforms: Custom transforms named by the schema's attributes.
    /// - Throws: ``RouteError`` or ``MappingError`` when the schema's routes or maps cannot be built.
    public init(store: Store, transforms: TransformRegistry = TransformRegistry()) throws {
        self.store = store
        self.frontEnd = try SyncFrontEnd(schema: store.schema, transforms: transforms)
        self.routes = frontEnd.routes
        self.mapping = frontEnd.mapping
        self.planner = frontEnd.planner
    }

    /// Syncs one response body through the route of `path`.
    ///
    /// ```swift
    /// let result = try await engine.sync(.get, "/users/3/posts", body: Data(json.utf8))
    /// ```
    ///
    /// - Parameters:
    ///   - method: The request's method.
    ///   - path: The request's path; its route says what the body holds.
    ///   - body: The response body.
    ///   - options: Stale policy override, invalid-object policy, progress.
    /// - Returns: What changed; for DATA routes, the parsed JSON in ``SyncResult/data``.
    /// - Throws: ``SyncError``; the store is then exactly as before.
    public func sync(_ method: HTTPMethod = .get, _ path: String, body: Data,
                     options: SyncOptions = SyncOptions()) async throws -> SyncResult {
        let plan = try resolve(.route(method, path), options: options)
        let chunkSize = max(1, options.chunkSize)
        var offset = 0
        return try await run(plan, source: "\(method) \(path)", totalBytes: Int64(body.count), options: options) {
            guard offset < body.count else { return nil }
            let end = min(body.count, offset + chunkSize)
            defer { offset = end }
            return [UInt8](body[body.startIndex + offset ..< body.startIndex + end])
        }
    }

    /// Syncs a response body that arrives as a sequence of byte chunks (an HTTP body), parsing as it streams.
    ///
    /// Rows are written as the body arrives, in one transaction, for as long as it keeps coming:
    /// as fast as a file import. A body that pauses for longer than
    /// ``SyncOptions/streamingPatience`` (0.1 s) is rolled back and staged outside the store's
    /// writer instead, then merged in one short transaction at its end: a stalled response holds
    /// up other writers for that long at most.
    ///
    /// ```swift
    /// let result = try await engine.sync(.get, "/users", chunks: response.body)
    /// ```
    ///
    /// - Throws: ``SyncError``, or the sequence's own error; the store is then exactly as before.
    public func sync<Chunks: AsyncSequence & Sendable>(_ method: HTTPMethod = .get, _ path: String, chunks: Chunks,
                                                       options: SyncOptions = SyncOptions()) async throws -> SyncResult
    where Chunks.Element == [UInt8] {
        try await importChunks(chunks, into: .route(method, path), source: "\(method) \(path)", options: options)
    }

    /// Imports a JSON file (or standard input with path `-`) in bounded memory.
    ///
    /// ```swift
    /// let result = try await engine.importFile("people.json", into: .entity("Person"))
    /// ```
    ///
    /// - Throws: ``SyncError`` naming the file; the store is then exactly as before.
    public func importFile(_ path: String, into target: ImportTarget,
                           options: SyncOptions = SyncOptions()) async throws -> SyncResult {
        let file = try FileChunks(path: path, chunkSize: options.chunkSize)
        defer { file.close() }
        let plan = try resolve(target, options: options)
        return try await run(plan, source: path, totalBytes: file.size, options: options, next: file.next)
    }

    /// Imports JSON from any async sequence of byte chunks (an HTTP body, a pipe).
    ///
    /// The chunks are parsed and written as they arrive, in one transaction, while they keep
    /// coming. When the producer pauses for longer than ``SyncOptions/streamingPatience``, the
    /// transaction rolls back, and the whole input is staged outside the store's writer and
    /// merged in one short transaction once the sequence ends (a one-page ``SyncSession``): a
    /// slow or stalled producer holds up other writers for that long at most.
    ///
    /// ```swift
    /// let result = try await engine.importChunks(body, into: .entity("Person"), source: url.absoluteString)
    /// ```
    ///
    /// - Throws: ``SyncError``, or the sequence's own error; the store is then exactly as before.
    public func importChunks<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, into target: ImportTarget,
                                                               source: String = "input",
                                                               options: SyncOptions = SyncOptions()) async throws -> SyncResult
    where Chunks.Element == [UInt8] {
        let plan = try resolve(target, options: options)
        let channel = ChunkChannel()
        let feeder = channel.feed(from: chunks)
        defer { feeder.cancel() }
        return try await withTaskCancellationHandler {
            try await importStreaming(plan, source: source, options: options, channel: channel)
        } onCancel: {
            channel.finish(throwing: CancellationError())
        }
    }

    /// Writes a body as it streams in while it keeps coming (``SyncOptions/streamingPatience``),
    /// else stages it in a one-page ``SyncSession`` and commits that.
    private func importStreaming(_ plan: SyncPlan, source: String, options: SyncOptions,
                                 channel: ChunkChannel) async throws -> SyncResult {
        let session = SyncSession(backend: self, plan: plan, options: options, source: source)
        var replay: ChunkLog?
        if case .data = plan.shape {
            // Nothing to write: parsed whole, as a session page.
        } else if options.streamingPatience > 0 {
            let log = ChunkLog(memoryBudget: max(0, options.stagingMemory))
            let patience = options.streamingPatience
            // The keys of the body's objects, as the session would report them if it staged.
            var keyed = plan
            keyed.collectKeys = true
            let eager = keyed
            do {
                return try await parsing(plan, source: source, totalBytes: nil, options: options) {
                    guard let chunk = try channel.receive() else { return nil }
                    try log.append(chunk)
                    return chunk
                } consume: { stream in
                    try await self.write(eager, stream: stream, source: source, patience: patience)
                }
            } catch is StreamStalled {
                // Rolled back, and the parsing thread has ended: stage what it read, then the rest.
                replay = log
            }
        }
        let replayed = replay
        _ = try await session.stage(source: source, channel: channel) {
            if let chunk = try replayed?.replay() { return chunk }
            return try channel.receive()
        }
        var result = try await session.commit(complete: true)
        result.stagedAfterPause = replayed != nil
        return result
    }

    /// The completion-handler form of ``sync(_:_:body:options:)``, delivering on `queue`.
    ///
    /// ```swift
    /// engine.sync(.get, "/users", body: data, queue: .main) { result in print(result) }
    /// ```
    public func sync(_ method: HTTPMethod = .get, _ path: String, body: Data, options: SyncOptions = SyncOptions(),
                     queue: DispatchQueue, completion: @escaping @Sendable (Result<SyncResult, any Error>) -> Void) {
        Task {
            let result: Result<SyncResult, any Error>
            do {
                result = .success(try await sync(method, path, body: body, options: options))
            } catch {
                result = .failure(error)
            }
            queue.async { completion(result) }
        }
    }
}

extension SyncEngine {
    func resolve(_ target: ImportTarget, options: SyncOptions) throws -> SyncPlan {
        try frontEnd.resolve(target, options: options)
    }

    func parsing<T: Sendable>(_ plan: SyncPlan, source: String, totalBytes: Int64?, options: SyncOptions,
                              channel: ChunkChannel? = nil, next: @escaping () throws -> [UInt8]?,
                              consume: @escaping @Sendable (ParsedStream) async throws -> T) async throws -> T {
        try await frontEnd.parsing(plan, source: source, totalBytes: totalBytes, options: options, channel: channel,
                                   next: next, consume: consume)
    }

    static func awaitData(_ stream: ParsedStream, route: Route?) async throws -> SyncResult {
        try await SyncFrontEnd.awaitData(stream, route: route)
    }

    /// Runs one response straight into one write transaction: a parsing thread feeds planned
    /// rows to the writer. For inputs that are all at hand (a buffer, a local file): the
    /// transaction never waits on a network.
    func run(_ plan: SyncPlan, source: String, totalBytes: Int64?, options: SyncOptions, channel: ChunkChannel? = nil,
             next: @escaping () throws -> [UInt8]?) async throws -> SyncResult {
        try await parsing(plan, source: source, totalBytes: totalBytes, options: options, channel: channel, next: next) { stream in
            if case .data = plan.shape {
                return try await Self.awaitData(stream, route: plan.route)
            }
            return try await self.write(plan, stream: stream, source: source)
        }
    }

    /// Writes the parsed stream's rows in one transaction. With `patience` (a body that streams
    /// in), the transaction starts once the first rows (or the end) are there, and a wait of
    /// more than `patience` seconds for the next ones throws ``StreamStalled``, rolling it back.
    private func write(_ plan: SyncPlan, stream: ParsedStream, source: String, patience: Double? = nil) async throws -> SyncResult {
        let maps = mapping.maps
        let observers = self.observers
        let sequence = self.sequence
        let planner = self.planner
        var tracked = plan.staleEntities
        if plan.collectKeys, let target = plan.targetEntity { tracked.insert(target) }
        let trackedEntities = tracked
        if patience != nil { await stream.awaitFirstMessage() }
        let clock = ContinuousClock()
        return try await store.database.write { db in
            let started = clock.now
            let writer = try RowWriter(db: db, maps: maps, trackSeen: trackedEntities)
            let summary = try stream.consume(source: source, patience: patience) { try writer.write($0) }
            // A skipped object's key still counts as seen: its row stays.
            let skippedKeys = summary.statistics.skippedKeys(planner: planner)
            for entity in summary.completeCollections.intersection(plan.staleEntities).sorted() {
                var keeping = writer.seenKeys(of: entity)
                let kept = skippedKeys[entity] ?? PrimaryKeys()
                keeping.formUnion(kept)
                try writer.deleteStale(entity: entity, scope: entity == plan.targetEntity ? plan.scope : nil,
                                       keeping: keeping, allStored: kept.isEmpty)
            }
            let changes = ChangeSet(sequence: sequence.next(), entities: writer.entityChanges())
            if !changes.isEmpty {
                db.afterNextTransaction { _ in observers.publish(changes) }
            }
            var result = SyncResult(changes: changes, skipped: summary.statistics.skipped,
                                    ignoredKeyCount: summary.statistics.ignoredKeyCount,
                                    objectCount: summary.statistics.objectCount, byteCount: summary.byteCount,
                                    data: nil, route: plan.route, metadata: summary.skeleton,
                                    seenKeys: plan.targetEntity.map { target in
                                        // Skipped objects' keys count as seen, as in a session.
                                        var keys = writer.seenKeys(of: target)
                                        if trackedEntities.contains(target), let kept = skippedKeys[target] { keys.formUnion(kept) }
                                        return keys
                                    } ?? PrimaryKeys(),
                                    scope: plan.scope)
            result.ignoredKeys = summary.statistics.ignored.keys(entityNames: maps.map(\.entity.name))
            result.writeLockDuration = started.duration(to: clock.now)
            return result
        }
    }
}

/// The first error of the parsing thread. `@unchecked Sendable`: guarded by `lock`.
final class FailureBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: (any Error)?

    func set(_ error: any Error) {
        lock.lock()
        if stored == nil { stored = error }
        lock.unlock()
    }

    var error: (any Error)? {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}

/// Hands a non-Sendable chunk source to the one parsing thread that calls it.
/// `@unchecked Sendable`: after the hand-over only that thread touches the value.
final class UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
