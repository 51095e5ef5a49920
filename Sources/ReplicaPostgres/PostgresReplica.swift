import Foundation
import Logging
import PostgresNIO
import ReplicaCore

/// A replica kept in PostgreSQL: one database shared by a fleet of services.
///
/// One of the two ``ReplicaCore/ReplicaStore``s: the same schema files, the same additive
/// migrations and the same write driver as the SQLite ``ReplicaSQLite/SQLiteReplica``: an upsert writes a row only where its values differ, each
/// sync is one transaction, stale rows are deleted inside the synced scope only, and each
/// commit publishes the exact keys it inserted, updated and deleted. Each commit is also
/// announced with `NOTIFY`, so observers in other processes (``changes(for:)``) see it.
///
/// ```swift
/// let schema = try Schema(contentsOf: URL(fileURLWithPath: "Schemas/blog.json"))
/// let replica = try await PostgresReplica.open(url: "postgres://replica@127.0.0.1:5432/cache", schema: schema)
/// let result = try await replica.importFile("users.json", into: .entity("User"))
/// print(result.changes["User"]?.inserted.count ?? 0)
/// let users = try await replica.rows(RowQuery("User", sort: [.ascending("name")]))
/// await replica.close()
/// ```
public final class PostgresReplica: Sendable {
    /// The database, without its password in its description.
    public let url: PostgresURL
    /// The schema in force: the one given, or the one recorded in the database.
    public let schema: Schema
    /// The schema's routes.
    public var routes: RouteTable { frontEnd.routes }
    package let frontEnd: SyncFrontEnd
    let connections: PostgresConnections
    let observers = ChangeObservers()
    let listener: ChangeListener
    /// The reads of live result sets, on a connection of their own.
    let liveReader: PostgresLiveSource
    /// Tells this replica's own announcements from other processes'.
    let origin = UUID().uuidString
    let logger: Logger

    init(url: PostgresURL, schema: Schema, frontEnd: SyncFrontEnd, connections: PostgresConnections, logger: Logger) {
        self.url = url
        self.schema = schema
        self.frontEnd = frontEnd
        self.connections = connections
        self.logger = logger
        self.listener = ChangeListener(connections: connections, url: url, logger: logger)
        self.liveReader = PostgresLiveSource(url: url, schema: schema, configuration: connections.configuration, logger: logger)
    }

    /// Opens (creating tables if needed) the replica in the database at `url`.
    ///
    /// ```swift
    /// let replica = try await PostgresReplica.open(url: "postgres://replica@db:5432/cache", schema: schema)
    /// ```
    ///
    /// - Parameters:
    ///   - url: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, with `?sslmode=…&sslrootcert=FILE`
    ///     for TLS (see ``PostgresURL/SSLMode``).
    ///   - schema: The schema; `nil` uses the one recorded in the database. A higher version than
    ///     the recorded one is applied additively, in one transaction, as on SQLite.
    ///   - transforms: Custom transforms named by the schema's attributes.
    ///   - logger: Where postgres-nio logs (nothing by default).
    /// - Throws: ``PostgresStoreError`` (`invalidURL`, also for an unreadable `sslrootcert` file,
    ///   `connectionRefused`, `authenticationFailed`, `unknownDatabase`, `tlsFailed`), or
    ///   ``ReplicaCore/StoreError`` (`missingSchema`, `incompatibleSchema`, `invalidSchema` for a schema
    ///   that could not sync, before connecting) naming the URL without its password; a refused
    ///   migration changes nothing.
    public static func open(url: String, schema: Schema? = nil, transforms: TransformRegistry = TransformRegistry(),
                            logger: Logger = Logger(label: "Replica.postgres", factory: { _ in SwiftLogNoOpLogHandler() }))
    async throws -> PostgresReplica {
        try await open(url: PostgresURL(url), schema: schema, transforms: transforms, logger: logger)
    }

    /// Opens the replica at `url`; see ``open(url:schema:transforms:logger:)-(String,_,_,_)``.
    public static func open(url: PostgresURL, schema: Schema? = nil, transforms: TransformRegistry = TransformRegistry(),
                            logger: Logger = Logger(label: "Replica.postgres", factory: { _ in SwiftLogNoOpLogHandler() }))
    async throws -> PostgresReplica {
        do {
            // Before anything is created or recorded: a schema that could not sync is refused here.
            try schema?.checkOpening(in: .postgres, transforms: transforms)
        } catch {
            throw StoreError(.invalidSchema, "the schema cannot open a store: \(error)", path: url.description)
        }
        let connections = try PostgresConnections(url: url, logger: logger)
        do {
            let inForce = try await connections.withConnection { connection in
                try await PostgresMigration(url: url, connection: connection, logger: logger).prepare(schema: schema)
            }
            let frontEnd = try SyncFrontEnd(schema: inForce, transforms: transforms)
            return PostgresReplica(url: url, schema: inForce, frontEnd: frontEnd, connections: connections, logger: logger)
        } catch {
            await connections.close()
            throw error
        }
    }

    /// Closes the replica's connections (its listener's and its live result sets' too: they stop
    /// updating, and reading rows of their large snapshots fails).
    public func close() async {
        await listener.stop()
        await liveReader.close()
        await connections.close()
    }

    /// The entity named `name`, or a ``ReplicaCore/StoreError``.
    public func requireEntity(_ name: String) throws -> Entity {
        try liveReader.requireEntity(name)
    }

    // MARK: Reading

    /// The rows a ``ReplicaCore/RowQuery`` selects, in the same order as on SQLite (`NULL` first
    /// when ascending, text by its bytes, the primary key breaking ties).
    ///
    /// ```swift
    /// let posts = try await replica.rows(RowQuery("Post", where: "\"userID\" = ?", arguments: [.integer(3)]))
    /// ```
    ///
    /// - Throws: ``ReplicaCore/StoreError`` (unknown entity or attribute, SQL that PostgreSQL refuses).
    public func rows(_ query: RowQuery) async throws -> [EntityRow] {
        let entity = try requireEntity(query.entity)
        let columns = entity.attributes.map(\.name.quotedIdentifier).joined(separator: ", ")
        var sql = "SELECT \(columns) FROM \(entity.tableName.quotedIdentifier)"
        if let predicate = query.predicate, !predicate.isEmpty {
            sql += " WHERE " + PostgresSQL.condition(predicate, names: entity.attributes.map(\.name))
        }
        sql += " ORDER BY " + (try orderBy(query.sort, for: entity))
        if let limit = query.limit { sql += " LIMIT \(max(0, limit))" }
        if let offset = query.offset { sql += " OFFSET \(max(0, offset))" }
        return try await fetchRows(entity, sql: sql, arguments: query.arguments)
    }

    /// The number of rows of `entity` matching a where-clause.
    ///
    /// ```swift
    /// let count = try await replica.count("Post", where: "\"userID\" = ?", arguments: [.integer(3)])
    /// ```
    ///
    /// - Throws: ``ReplicaCore/StoreError``.
    public func count(_ entity: String, where predicate: String? = nil, arguments: [AttributeValue] = []) async throws -> Int {
        let entity = try requireEntity(entity)
        var sql = "SELECT count(*) FROM \(entity.tableName.quotedIdentifier)"
        if let predicate, !predicate.isEmpty {
            sql += " WHERE " + PostgresSQL.condition(predicate, names: entity.attributes.map(\.name))
        }
        let query = PostgresSQL.query(sql, arguments)
        let url = self.url
        do {
            return try await connections.withConnection { connection in
                var total = 0
                for try await (count) in try await connection.query(query, logger: self.logger).decode(Int64.self) {
                    total = Int(count)
                }
                return total
            }
        } catch {
            throw StoreError(.database, "count of '\(entity.name)' failed: \(PostgresStoreError.from(error, url: url).message)",
                             path: url.description)
        }
    }

    func fetchRows(_ entity: Entity, sql: String, arguments: [AttributeValue]) async throws -> [EntityRow] {
        let query = PostgresSQL.query(sql, arguments)
        let names = entity.attributes.map(\.name)
        let types = entity.attributes.map(\.type)
        let keyIndexes = entity.primaryKeyPositions
        let url = self.url
        do {
            return try await connections.withConnection { connection in
                var rows: [EntityRow] = []
                for try await row in try await connection.query(query, logger: self.logger) {
                    rows.append(try PostgresSQL.entityRow(row, of: entity, names: names, types: types, keyIndexes: keyIndexes))
                }
                return rows
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.database, "query on '\(entity.name)' failed: \(PostgresStoreError.from(error, url: url).message)",
                             path: url.description)
        }
    }

    /// `ORDER BY` terms for `sort` as SQLite orders (``PostgresSQL/orderBy(_:for:location:)``).
    func orderBy(_ sort: [SortKey], for entity: Entity) throws -> String {
        try PostgresSQL.orderBy(sort, for: entity, location: url.description)
    }
}

extension PostgresReplica: ReplicaStore {
    public var location: String { url.description }
    public var _internals: ReplicaStoreInternals { ReplicaStoreInternals(self) }

    /// Other processes' commits reach this replica through `LISTEN` as they commit: nothing to poll.
    ///
    /// ```swift
    /// let monitor = replica.detectExternalChanges(every: .milliseconds(250))   // polls nothing
    /// ```
    public func detectExternalChanges(every interval: Duration = .milliseconds(500)) -> ExternalChangeMonitor {
        ExternalChangeMonitor()
    }
}

extension PostgresReplica {
    /// The property maps of every entity.
    public var mapping: SchemaMapping { frontEnd.mapping }
}
