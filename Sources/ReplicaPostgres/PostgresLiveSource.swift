import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import ReplicaCore

/// The reads of a PostgreSQL replica's live result sets.
///
/// A live result set reads synchronously, on its own queue (or on the thread reading a large
/// snapshot's rows), so these reads wait on postgres-nio's event-loop futures, never on Swift
/// concurrency's threads: they cannot starve the cooperative pool that delivers the change sets
/// they answer. One connection of its own, opened on first use and again after it broke, one
/// read at a time; a load runs in one `REPEATABLE READ` transaction, so its count and its rows
/// agree.
///
final class PostgresLiveSource: LiveRowSource, Sendable {
    let url: PostgresURL
    let schema: Schema
    let configuration: PostgresConnection.Configuration
    let logger: Logger
    /// The reading connection (opened on first use), and whether the replica was closed; held
    /// locked for the whole of each read, so reads run one at a time.
    private let state = Locked<(connection: PostgresConnection?, closed: Bool)>((nil, false))

    init(url: PostgresURL, schema: Schema, configuration: PostgresConnection.Configuration, logger: Logger) {
        self.url = url
        self.schema = schema
        self.configuration = configuration
        self.logger = logger
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
        return try reading(entity) { connection in
            _ = try connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger).wait()
            do {
                let probe = PostgresSQL.query("SELECT count(*) FROM (SELECT 1 FROM \(table)\(whereClause) LIMIT \(resident + 1)) AS probe",
                                              arguments)
                var matching = 0
                for row in try connection.query(probe, logger: logger).wait().rows {
                    matching = Int(try row.decode(Int64.self))
                }
                let load: LiveLoad
                if matching <= resident || (request.limit ?? Int.max) <= resident {
                    let columns = names.map(\.quotedIdentifier).joined(separator: ", ")
                    let sql = "SELECT \(columns) FROM \(table)\(whereClause) ORDER BY \(orderBy)\(limit)"
                    // Filled by postgres-nio's row callback, on the connection's event loop, one row after the other.
                    let rows = Locked<[EntityRow]>([])
                    _ = try connection.query(PostgresSQL.query(sql, arguments), logger: logger) { row in
                        let decoded = try PostgresSQL.entityRow(row, of: entity, names: names, types: types, keyIndexes: keyIndexes)
                        rows.withLock { $0.append(decoded) }
                    }.wait()
                    load = .rows(rows.value)
                } else {
                    // The key's columns (a composite key's parts, whose tuple is the entry's key), then the sort values.
                    let columns = (keyIndexes + request.sortAttributes).map { names[$0].quotedIdentifier }
                    let sql = "SELECT \(columns.joined(separator: ", ")) FROM \(table)\(whereClause) ORDER BY \(orderBy)\(limit)"
                    let keyTypes = keyIndexes.map { types[$0] }
                    let sortTypes = request.sortAttributes.map { types[$0] }
                    // Streamed as the rows arrive: a million rows cost their entries, not their messages.
                    let entries = Locked(SnapshotEntries())
                    _ = try connection.query(PostgresSQL.query(sql, arguments), logger: logger) { row in
                        var cells = row.makeIterator()
                        var parts: [AttributeValue] = []
                        for type in keyTypes {
                            guard let keyCell = cells.next() else { return }
                            parts.append(try PostgresSQL.value(keyCell, type: type))
                        }
                        var entry = SnapshotEntry(key: parts.count == 1 ? parts[0] : .compositeKey(parts))
                        for (slot, type) in sortTypes.enumerated() {
                            guard let cell = cells.next() else { break }
                            entry.append(try PostgresSQL.value(cell, type: type), slot: slot)
                        }
                        let decoded = entry
                        entries.withLock { $0.append(decoded) }
                    }.wait()
                    load = .entries(entries.withLock { entries in
                        defer { entries = [] }
                        return entries
                    })
                }
                _ = try connection.query("COMMIT", logger: logger).wait()
                return load
            } catch {
                _ = try? connection.query("ROLLBACK", logger: logger).wait()
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
        // Filled by postgres-nio's row callback, on the connection's event loop, one row after the other.
        let rows = Locked<[EntityRow]>([])
        try reading(entity) { connection in
            for chunk in liveKeyChunks(keys, of: entity) {
                let sql = "SELECT \(columns) FROM \(entity.tableName.quotedIdentifier) WHERE \(chunk.condition)\(condition)"
                _ = try connection.query(PostgresSQL.query(sql, chunk.arguments + predicate.arguments), logger: logger) { row in
                    let decoded = try PostgresSQL.entityRow(row, of: entity, names: names, types: types, keyIndexes: keyIndexes)
                    rows.withLock { $0.append(decoded) }
                }.wait()
            }
        }
        return rows.value
    }

    /// Closes the connection; later reads fail.
    func close() async {
        let open: PostgresConnection? = state.withLock { state in
            state.closed = true
            defer { state.connection = nil }
            return state.connection
        }
        try? await open?.close()
    }

    /// Runs `body` with the connection, one read at a time, (re)connecting first when needed;
    /// errors become a ``ReplicaCore/StoreError`` naming the entity and the URL without its password.
    private func reading<T>(_ entity: Entity, _ body: (PostgresConnection) throws -> T) throws -> T {
        do {
            return try state.withLock { state in
                guard !state.closed else { throw PostgresStoreError(.server, "the replica is closed", url: url.description) }
                let current: PostgresConnection
                if let open = state.connection, !open.isClosed {
                    current = open
                } else {
                    current = try PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.any(),
                                                             configuration: configuration, id: 0, logger: logger).wait()
                    state.connection = current
                }
                return try body(current)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.database, "query on '\(entity.name)' failed: \(PostgresStoreError.from(error, url: url).message)",
                             path: url.description)
        }
    }
}
