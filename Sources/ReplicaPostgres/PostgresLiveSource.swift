import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import ReplicaCore

/// The reads of a PostgreSQL replica's live result sets, on a thread of their own.
///
/// A live result set reads synchronously: on its own queue, or on the thread that reads a large
/// snapshot's rows. Those reads are written here as async code over postgres-nio's async API and
/// run on an event loop of this source's own (one thread, carrying the one reading connection),
/// while the thread that asked waits for the answer. So no read runs on, or waits for, the event
/// loops the application's servers and clients share, nor the cooperative pool that delivers the
/// change sets the reads answer; and a snapshot's rows may be read from any thread, an event loop's
/// included. One read at a time, on the connection opened on first use and again after it broke; a
/// load runs in one `REPEATABLE READ` transaction, so its count and its rows agree.
final class PostgresLiveSource: LiveRowSource, Sendable {
    let url: PostgresURL
    let schema: Schema
    let configuration: PostgresConnection.Configuration
    let logger: Logger
    /// The reads' own thread.
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let loop: any EventLoop
    /// Runs the reads' tasks on `loop` (an ``EventLoopTaskExecutor`` where the platform has task
    /// executors; elsewhere, macOS 14, they run on the global executor).
    private let executor: (any Sendable)?
    /// The reading connection (opened on first use), and whether the replica was closed; held
    /// locked for the whole of each read, so reads run one at a time.
    private let state = Locked<(connection: PostgresConnection?, closed: Bool)>((nil, false))

    init(url: PostgresURL, schema: Schema, configuration: PostgresConnection.Configuration, logger: Logger) {
        self.url = url
        self.schema = schema
        self.configuration = configuration
        self.logger = logger
        let loop = group.next()
        self.loop = loop
        if #available(macOS 15, *) {
            executor = EventLoopTaskExecutor(loop)
        } else {
            executor = nil
        }
    }

    deinit {
        group.shutdownGracefully { _ in }
    }

    func requireEntity(_ name: String) throws -> Entity {
        guard let entity = schema.entity(named: name) else {
            let known = schema.entities.map(\.name).joined(separator: ", ")
            throw StoreError(.unknownEntity, "unknown entity '\(name)' (the schema has: \(known))", path: url.description)
        }
        return entity
    }

    func loadLive(_ request: LiveLoadRequest) throws -> LiveLoad {
        let entity = request.entity
        let table = entity.tableName.quotedIdentifier
        let names = entity.attributes.map(\.name)
        let types = entity.attributes.map(\.type)
        let keyIndexes = entity.primaryKeyPositions
        let whereClause = request.predicate.isAll ? ""
            : " WHERE " + PostgresSQL.condition(request.predicate.sql, names: names)
        let arguments = request.predicate.arguments
        let orderBy = try PostgresSQL.orderBy(request.sort, for: entity, location: url.description)
        let limit = request.limit.map { " LIMIT \(max(0, $0))" } ?? ""
        let resident = request.residentLimit
        let logger = logger
        return try reading(entity) { connection in
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
            do {
                let probe = PostgresSQL.query("SELECT count(*) FROM (SELECT 1 FROM \(table)\(whereClause) LIMIT \(resident + 1)) AS probe",
                                              arguments)
                var matching = 0
                for try await count in try await connection.query(probe, logger: logger).decode(Int64.self) {
                    matching = Int(count)
                }
                let load: LiveLoad
                if matching <= resident || (request.limit ?? Int.max) <= resident {
                    let columns = names.map(\.quotedIdentifier).joined(separator: ", ")
                    let sql = "SELECT \(columns) FROM \(table)\(whereClause) ORDER BY \(orderBy)\(limit)"
                    var rows: [EntityRow] = []
                    for try await row in try await connection.query(PostgresSQL.query(sql, arguments), logger: logger) {
                        rows.append(try PostgresSQL.entityRow(row, of: entity, names: names, types: types, keyIndexes: keyIndexes))
                    }
                    load = .rows(rows)
                } else {
                    // The key's columns (a composite key's parts, whose tuple is the entry's key), then the sort values.
                    let columns = (keyIndexes + request.sortAttributes).map { names[$0].quotedIdentifier }
                    let sql = "SELECT \(columns.joined(separator: ", ")) FROM \(table)\(whereClause) ORDER BY \(orderBy)\(limit)"
                    let keyTypes = keyIndexes.map { types[$0] }
                    let sortTypes = request.sortAttributes.map { types[$0] }
                    // Streamed as the rows arrive: a million rows cost their entries, not their messages.
                    var entries = SnapshotEntries()
                    for try await row in try await connection.query(PostgresSQL.query(sql, arguments), logger: logger) {
                        var cells = row.makeIterator()
                        var parts: [AttributeValue] = []
                        for type in keyTypes {
                            guard let keyCell = cells.next() else { break }
                            parts.append(try PostgresSQL.value(keyCell, type: type))
                        }
                        guard parts.count == keyTypes.count else { continue }
                        var entry = SnapshotEntry(key: parts.count == 1 ? parts[0] : .compositeKey(parts))
                        for (slot, type) in sortTypes.enumerated() {
                            guard let cell = cells.next() else { break }
                            entry.append(try PostgresSQL.value(cell, type: type), slot: slot)
                        }
                        entries.append(entry)
                    }
                    load = .entries(entries)
                }
                try await connection.query("COMMIT", logger: logger)
                return load
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    func liveRows(of entity: Entity, keys: [AttributeValue], predicate: RowPredicate) throws -> [EntityRow] {
        guard !keys.isEmpty else { return [] }
        let names = entity.attributes.map(\.name)
        let types = entity.attributes.map(\.type)
        let keyIndexes = entity.primaryKeyPositions
        let columns = names.map(\.quotedIdentifier).joined(separator: ", ")
        let condition = predicate.isAll ? "" : " AND (" + PostgresSQL.condition(predicate.sql, names: names) + ")"
        let chunks = liveKeyChunks(keys, of: entity).map { chunk in
            PostgresSQL.query("SELECT \(columns) FROM \(entity.tableName.quotedIdentifier) WHERE \(chunk.condition)\(condition)",
                              chunk.arguments + predicate.arguments)
        }
        let logger = logger
        return try reading(entity) { connection in
            var rows: [EntityRow] = []
            for query in chunks {
                for try await row in try await connection.query(query, logger: logger) {
                    rows.append(try PostgresSQL.entityRow(row, of: entity, names: names, types: types, keyIndexes: keyIndexes))
                }
            }
            return rows
        }
    }

    /// Closes the connection and stops the reads' thread; later reads fail.
    func close() async {
        let open: PostgresConnection? = state.withLock { state in
            state.closed = true
            defer { state.connection = nil }
            return state.connection
        }
        try? await open?.close()
        try? await group.shutdownGracefully()
    }

    /// Runs `read` with the connection on the reads' own thread, one read at a time,
    /// (re)connecting first when needed, and waits for it; errors become a
    /// ``ReplicaCore/StoreError`` naming the entity and the URL without its password.
    private func reading<T: Sendable>(_ entity: Entity, _ read: @escaping @Sendable (PostgresConnection) async throws -> T) throws -> T {
        do {
            return try state.withLock { state in
                guard !state.closed else { throw PostgresStoreError(.server, "the replica is closed", url: url.description) }
                let open = state.connection.flatMap { $0.isClosed ? nil : $0 }
                let (configuration, logger, loop) = (configuration, logger, loop)
                let (connection, outcome) = onReadingThread { () async -> (PostgresConnection?, Result<T, any Error>) in
                    var connection = open
                    do {
                        let current: PostgresConnection
                        if let connection {
                            current = connection
                        } else {
                            current = try await PostgresConnection.connect(on: loop, configuration: configuration, id: 0, logger: logger)
                            connection = current
                        }
                        return (current, .success(try await read(current)))
                    } catch {
                        return (connection, .failure(error))
                    }
                }
                state.connection = connection
                return try outcome.get()
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.database, "query on '\(entity.name)' failed: \(PostgresStoreError.from(error, url: url).message)",
                             path: url.description)
        }
    }

    /// Runs `body` in a task on the reads' own thread and blocks the calling thread (never that
    /// one: it is this source's alone) until the task has answered.
    private func onReadingThread<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let answer = ConditionLocked<T?>(nil)
        let run: @Sendable () async -> Void = {
            let value = await body()
            answer.withLock { $0 = value }
        }
        if #available(macOS 15, *), let executor = executor as? EventLoopTaskExecutor {
            Task(executorPreference: executor, operation: run)
        } else {
            Task(operation: run)
        }
        return answer.withLock(waitingUntil: { $0 != nil }) { answer in
            // The wait has no deadline: it ends only once the task has set the answer.
            guard let value = answer else { preconditionFailure("the reading task ended without an answer") }
            return value
        }
    }
}

/// A task executor that runs jobs on one event loop: tasks that prefer it (and the nonisolated
/// async functions they call, postgres-nio's included) run on that loop's thread, not on the
/// cooperative pool.
@available(macOS 15, *)
final class EventLoopTaskExecutor: TaskExecutor {
    let loop: any EventLoop

    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
