import Foundation
import GRDB

extension SyncEngine {
    /// Deletes rows of `entity` inside `scope` whose keys are not in `keeping`, in one
    /// transaction, and publishes the change set: how a collection spread over several pages
    /// drops its stale rows once the last page arrived.
    ///
    /// ```swift
    /// var seen = PrimaryKeys()
    /// for page in pages { seen.formUnion(try await engine.sync(.get, page, body: data, options: keys).seenKeys) }
    /// try await engine.deleteStale("Post", scope: scope, keeping: seen)
    /// ```
    ///
    /// - Returns: The committed change set (deleted keys).
    /// - Throws: ``SyncError``.
    @discardableResult
    public func deleteStale(_ entity: String, scope: RouteScope?, keeping: PrimaryKeys) async throws -> ChangeSet {
        guard let index = planner.index(of: entity) else {
            throw SyncError(.unknownEntity, "unknown entity '\(entity)'")
        }
        return try await commit { writer in try writer.deleteStale(entity: index, scope: scope, keeping: keeping) }
    }

    /// Deletes one row (after the API deleted the object), and publishes the change set.
    ///
    /// ```swift
    /// try await engine.delete("Post", key: .integer(7))
    /// ```
    ///
    /// - Throws: ``SyncError``.
    @discardableResult
    public func delete(_ entity: String, key: AttributeValue) async throws -> ChangeSet {
        guard let index = planner.index(of: entity) else {
            throw SyncError(.unknownEntity, "unknown entity '\(entity)'")
        }
        return try await commit { writer in try writer.delete(entity: index, key: key) }
    }

    /// Runs `body` with a row writer in one transaction and publishes what it changed.
    private func commit(_ body: @escaping @Sendable (RowWriter) throws -> Void) async throws -> ChangeSet {
        let maps = mapping.maps
        let observers = self.observers
        let sequence = self.sequence
        do {
            return try await store.database.write { db in
                let writer = try RowWriter(db: db, maps: maps, trackSeen: [])
                try body(writer)
                let changes = ChangeSet(sequence: sequence.next(), entities: writer.entityChanges())
                if !changes.isEmpty { db.afterNextTransaction { _ in observers.publish(changes) } }
                return changes
            }
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.database, Store.describe(error), underlying: error as? DatabaseError)
        }
    }
}

extension PrimaryKeys {
    /// Adds the keys of `other` (an empty set takes `other`'s storage instead of copying it).
    public mutating func formUnion(_ other: PrimaryKeys) {
        if integers.isEmpty { integers = other.integers } else { integers += other.integers }
        if strings.isEmpty { strings = other.strings } else { strings += other.strings }
    }
}
