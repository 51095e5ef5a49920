import Foundation
import Logging
import NIOCore
import PostgresNIO
import Replica

extension PostgresReplica {
    /// Imports a JSON file (or standard input with path `-`) in bounded memory.
    ///
    /// The rows stream into a temporary table with `COPY … FROM STDIN` as they are parsed, and
    /// one merge statement per entity upserts them, in one transaction.
    ///
    /// ```swift
    /// let result = try await replica.importFile("people.json", into: .entity("Person"))
    /// ```
    ///
    /// - Throws: ``Replica/SyncError`` naming the file; the database is then exactly as before.
    public func importFile(_ path: String, into target: ImportTarget, options: SyncOptions = SyncOptions()) async throws -> SyncResult {
        let file = try FileChunks(path: path, chunkSize: options.chunkSize)
        defer { file.close() }
        let plan = try frontEnd.resolve(target, options: options)
        return try await run(plan, source: path, totalBytes: file.size, options: options, next: file.next)
    }

    /// Syncs one response body through the route of `path`.
    ///
    /// ```swift
    /// let result = try await replica.sync(.get, "/users/3/posts", body: Data(json.utf8))
    /// ```
    ///
    /// - Throws: ``Replica/SyncError``; the database is then exactly as before.
    public func sync(_ method: HTTPMethod = .get, _ path: String, body: Data, options: SyncOptions = SyncOptions()) async throws -> SyncResult {
        let plan = try frontEnd.resolve(.route(method, path), options: options)
        let chunkSize = max(1, options.chunkSize)
        let offset = UncheckedBox(Counter())
        return try await run(plan, source: "\(method) \(path)", totalBytes: Int64(body.count), options: options) {
            let start = offset.value.value
            guard start < body.count else { return nil }
            let end = min(body.count, start + chunkSize)
            offset.value.value = end
            return [UInt8](body[body.startIndex + start ..< body.startIndex + end])
        }
    }

    /// Imports JSON arriving as byte chunks (an HTTP body, a pipe), parsed as it streams.
    ///
    /// The rows stream into a temporary table, which holds no lock on the replica's tables: a
    /// slow producer holds up no other writer. The merge then takes the collection's lock for
    /// one short transaction.
    ///
    /// ```swift
    /// let result = try await replica.importChunks(body, into: .route(.get, "/people"), source: url)
    /// ```
    ///
    /// - Throws: ``Replica/SyncError``, or the sequence's own error; the database is then exactly as before.
    public func importChunks<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, into target: ImportTarget,
                                                               source: String = "input",
                                                               options: SyncOptions = SyncOptions()) async throws -> SyncResult
    where Chunks.Element == [UInt8] {
        let plan = try frontEnd.resolve(target, options: options)
        let channel = ChunkChannel()
        let feeder = channel.feed(from: chunks)
        defer { feeder.cancel() }
        return try await withTaskCancellationHandler {
            try await run(plan, source: source, totalBytes: nil, options: options, channel: channel) { try channel.receive() }
        } onCancel: {
            channel.finish(throwing: CancellationError())
        }
    }

    func run(_ plan: SyncPlan, source: String, totalBytes: Int64?, options: SyncOptions, channel: ChunkChannel? = nil,
             next: @escaping () throws -> [UInt8]?) async throws -> SyncResult {
        try await frontEnd.parsing(plan, source: source, totalBytes: totalBytes, options: options, channel: channel,
                                   next: next) { stream in
            if case .data = plan.shape { return try await SyncFrontEnd.awaitData(stream, route: plan.route) }
            do {
                return try await self.write(plan, stream: stream, source: source)
            } catch let error as SyncError {
                throw error
            } catch let error as CancellationError {
                throw error
            } catch {
                throw SyncError(.database, PostgresStoreError.from(error, url: self.url).description, source: source,
                                underlying: error)
            }
        }
    }

    /// Streams the parsed rows into stage tables, merges them and deletes stale rows in one
    /// transaction, then announces the change set.
    func write(_ plan: SyncPlan, stream: ParsedStream, source: String) async throws -> SyncResult {
        let maps = frontEnd.mapping.maps
        let frontEnd = self.frontEnd
        let logger = self.logger
        let url = self.url
        let origin = self.origin
        let (result, changes) = try await connections.withConnection { connection in
            let session = PostgresWriteSession(connection: connection, maps: maps, logger: logger, url: url)
            try await session.execute("BEGIN")
            do {
                let summary = try await session.stage(stream)
                var result = try await session.merge(plan: plan, summary: summary, skippedKeys: frontEnd.skippedKeys(summary),
                                                     origin: origin, source: source)
                try await session.execute("COMMIT")
                result.ignoredKeys = summary.ignoredKeys(entityNames: maps.map(\.entity.name))
                // From the merge's first table lock to the commit: what other writers of those tables waited.
                result.writeLockDuration = session.lockedSince.map { $0.duration(to: ContinuousClock.now) }
                return (result, result.changes)
            } catch {
                try? await session.execute("ROLLBACK")
                throw error
            }
        }
        if !changes.isEmpty { observers.publish(changes) }
        return result
    }
}

/// A mutable integer a chunk source closes over (only the parsing thread calls it).
final class Counter {
    var value = 0
}

/// Hands a non-Sendable value to the one thread or task that uses it after the hand-over.
/// `@unchecked Sendable`: the value is touched by one side at a time.
final class UncheckedBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
