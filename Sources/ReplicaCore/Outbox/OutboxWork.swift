import Foundation

/// What a write job does to the outbox beside its rows: local writes to queue, and what the
/// sender learned of mutations already queued. Every write job, whatever else it does, ends by
/// applying the pending mutations again on top of the rows it wrote (the rebase), so the store
/// always reads as the server's data plus what is pending.
package struct OutboxWork: Sendable {
    /// A local write to queue: its row change is made and its mutation recorded, in the job's
    /// transaction.
    package struct LocalWrite: Sendable {
        package var entity: Int
        /// The row's key; `nil` for a new row the API is to number: it gets a temporary key (below
        /// every stored integer key, or `local-` and a UUID), replaced by the API's once confirmed.
        package var key: AttributeValue?
        /// The attributes set, by name; empty for a delete.
        package var changes: [String: AttributeValue]
        package var isDelete: Bool
        package var idempotencyKey: String
        package var createdAt: Date

        package init(entity: Int, key: AttributeValue?, changes: [String: AttributeValue], isDelete: Bool,
                     idempotencyKey: String = UUID().uuidString, createdAt: Date = Date()) {
            self.entity = entity
            self.key = key
            self.changes = changes
            self.isDelete = isDelete
            self.idempotencyKey = idempotencyKey
            self.createdAt = createdAt
        }
    }

    package var queued: [LocalWrite] = []
    /// Mutations the API confirmed: they leave the outbox (the job's rows are the server's reply).
    package var confirmed: [Int64] = []
    /// Mutations the API refused: they stay listed, no longer applied.
    package var rejected: [(id: Int64, rejection: Mutation.Rejection)] = []
    /// Mutations whose attempt failed without an answer that decides them (a connection error, a
    /// 503): they stay pending, their attempts counted.
    package var failedAttempts: [(id: Int64, error: String)] = []
    /// Mutations the application gave up: they leave the outbox.
    package var discarded: [Int64] = []
    /// Rejected mutations sent again (with new changes, when given): pending again.
    package var retried: [(id: Int64, changes: [String: AttributeValue]?)] = []
    /// Rows created under a temporary key that the API numbered (the job's rows hold the API's
    /// row): what referred to the temporary key (foreign keys, links, pending mutations) is
    /// rewritten to the API's key, and the temporary row goes.
    package var rekeyed: [(entity: Int, from: AttributeValue, to: AttributeValue)] = []
    /// ETags the API gave rows in this job's answer (the job's rows are the API's rows): a later
    /// local change of a row that still reads so is sent with `If-Match` that ETag, and the
    /// pending changes of the row that had one take this one.
    package var versions: [(entity: Int, key: AttributeValue, etag: String)] = []
    /// Pending mutations sent again after a conflict: under a new `Idempotency-Key`, with the
    /// precondition given (`nil`: none) and, when given, new changes.
    package var reissued: [(id: Int64, precondition: String?, changes: [String: AttributeValue]?)] = []
    /// A push about to send: every pending create no push has taken yet is marked taken at this
    /// date (``Mutation/sentAt``), before any is sent, so that a local delete of its row no longer
    /// takes it back (the API may have it by then).
    package var takenForSending: Date?

    package init() {}

    /// Adds what `other` does to the outbox (a group of confirmations committed together).
    package mutating func absorb(_ other: OutboxWork) {
        queued += other.queued
        confirmed += other.confirmed
        rejected += other.rejected
        failedAttempts += other.failedAttempts
        discarded += other.discarded
        retried += other.retried
        rekeyed += other.rekeyed
        versions += other.versions
        reissued += other.reissued
        takenForSending = takenForSending ?? other.takenForSending
    }

    /// Whether the job changes nothing in the outbox (it still rebases).
    package var isEmpty: Bool {
        queued.isEmpty && confirmed.isEmpty && rejected.isEmpty && failedAttempts.isEmpty && discarded.isEmpty && retried.isEmpty
            && rekeyed.isEmpty && versions.isEmpty && reissued.isEmpty && takenForSending == nil
    }
}

/// One write job's pass over the outbox, in the order the write driver calls it: ``begin(_:in:mapping:)``
/// once the job's rows are written (records what the sender learned), ``keeping(_:in:)`` for the
/// stale deletions (pending creates keep their rows), and ``finish(in:)`` after the deletions
/// (queues the new local writes and applies again the pending mutations of the rows the job wrote).
package struct OutboxPass {
    private let work: OutboxWork
    private let mapping: SchemaMapping
    /// Whether the store has the outbox table.
    private var exists: Bool

    /// Applies what the sender learned.
    package static func begin(_ work: OutboxWork, in transaction: some StoreTransaction,
                              mapping: SchemaMapping) async throws -> OutboxPass {
        let dialect = transaction.dialect
        if dialect == .postgres {
            // Transactions of several connections would each rebase what they read as pending: one
            // that changes the outbox waits for those that read it, and they for it, so no rebase
            // applies a mutation another transaction has just confirmed (SQLite's single writer
            // orders them already).
            let lock = work.isEmpty ? "pg_advisory_xact_lock_shared" : "pg_advisory_xact_lock"
            _ = try await transaction.select("SELECT 1 FROM (SELECT \(lock)(\(OutboxTable.lockKey))) AS locked", [], types: [.integer])
        }
        var exists = true
        if OutboxTable.mayBeMissing(dialect) {
            exists = try await !transaction.select(OutboxTable.existsQuery, [], types: [.integer]).isEmpty
            if !exists && !work.queued.isEmpty {
                for statement in OutboxTable.create(dialect) { try await transaction.execute(statement, []) }
                exists = true
            }
        }
        let pass = OutboxPass(work: work, mapping: mapping, exists: exists)
        guard exists else { return pass }
        let table = OutboxTable.name
        for id in work.confirmed + work.discarded {
            try await transaction.execute("DELETE FROM \(table) WHERE id = ?", [.integer(id)])
        }
        for (id, rejection) in work.rejected {
            try await transaction.execute("UPDATE \(table) SET state = 'rejected', attempts = attempts + 1, status = ?, error_body = ?, "
                                          + "last_error = NULL WHERE id = ?",
                                          [.integer(Int64(rejection.status)), .string(rejection.body), .integer(id)])
        }
        for (id, error) in work.failedAttempts {
            try await transaction.execute("UPDATE \(table) SET attempts = attempts + 1, last_error = ? WHERE id = ?",
                                          [.string(error), .integer(id)])
        }
        for (id, changes) in work.retried {
            // A new request: a key of its own (an API that kept the refusal under the old key would
            // answer it again, or refuse the changed body as the key's reuse).
            var sql = "UPDATE \(table) SET state = 'pending', status = NULL, error_body = NULL, last_error = NULL, idempotency_key = ?"
            var arguments: [AttributeValue] = [.string(UUID().uuidString)]
            if let changes {
                sql += ", changes = ?"
                arguments.append(.string(OutboxTable.text(of: changes)))
            }
            try await transaction.execute(sql + " WHERE id = ?", arguments + [.integer(id)])
        }
        if let taken = work.takenForSending {
            try await transaction.execute("UPDATE \(table) SET sent_at = ? WHERE state = 'pending' AND kind = 'create' AND sent_at IS NULL",
                                          [.double(taken.timeIntervalSince1970)])
        }
        for (id, precondition, changes) in work.reissued {
            var sql = "UPDATE \(table) SET idempotency_key = ?, precondition = ?"
            var arguments: [AttributeValue] = [.string(UUID().uuidString), precondition.map(AttributeValue.string) ?? .null]
            if let changes {
                sql += ", changes = ?"
                arguments.append(.string(OutboxTable.text(of: changes)))
            }
            try await transaction.execute(sql + " WHERE id = ?", arguments + [.integer(id)])
        }
        return pass
    }

    /// The pending mutations that also meet `condition` (SQL over the outbox's columns), in commit order.
    private func pending(_ condition: String, _ arguments: [AttributeValue],
                         in transaction: some StoreTransaction) async throws -> [Mutation] {
        try await transaction.select("SELECT \(OutboxTable.columns) FROM \(OutboxTable.name) WHERE state = 'pending' AND (\(condition)) "
                                     + "ORDER BY id", arguments, types: OutboxTable.types)
            .compactMap { OutboxTable.decode($0, schema: mapping.schema) }
    }

    /// The pending mutations of `rows` (entity name, key text), in commit order: by entity and key
    /// for a few rows, else the whole outbox filtered.
    private func pending(of rows: Set<String>, in transaction: some StoreTransaction) async throws -> [Mutation] {
        if rows.count > 256 {
            return try await pending("1 = 1", [], in: transaction).filter { rows.contains(Self.row($0.entity, $0.key)) }
        }
        var keysByEntity: [String: [String]] = [:]
        for row in rows {
            let parts = row.split(separator: "\u{0}", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            keysByEntity[String(parts[0]), default: []].append(String(parts[1]))
        }
        var found: [Mutation] = []
        for (entity, keys) in keysByEntity {
            found += try await pending("entity = ? AND key IN (" + Array(repeating: "?", count: keys.count).joined(separator: ", ") + ")",
                                       [.string(entity)] + keys.map(AttributeValue.string), in: transaction)
        }
        return found.sorted { $0.id < $1.id }
    }

    /// A row as the passes name it: the entity's name and the key's text.
    static func row(_ entity: String, _ key: AttributeValue) -> String { entity + "\u{0}" + OutboxTable.text(of: key) }

    /// `deletions`, each also keeping the rows pending mutations create: a sync that does not
    /// list them yet does not take a local row away. A row a pending mutation only changes goes
    /// when the API no longer lists it (the store reads as the API's rows with the pending
    /// mutations on top, and a change of a row that is gone changes nothing; its send will be
    /// refused).
    package func keeping(_ deletions: [StaleDeletion], in transaction: some StoreTransaction) async throws -> [StaleDeletion] {
        guard exists, !deletions.isEmpty else { return deletions }
        let creates = try await pending("kind = 'create'", [], in: transaction)
        guard !creates.isEmpty else { return deletions }
        return deletions.map { deletion in
            let name = mapping.maps[deletion.entity].entity.name
            var kept = PrimaryKeys(creates.filter { $0.entity == name }.map(\.key))
            guard !kept.isEmpty else { return deletion }
            var deletion = deletion
            kept.formUnion(deletion.keeping)
            deletion.keeping = kept
            deletion.allWritten = false
            return deletion
        }
    }

    /// What ``finish(in:)`` did: the mutations it queued, and what the rebase changed.
    package struct Finished: Sendable {
        package var queued: [Mutation] = []
        /// Mutations a local delete took back: the create no push had taken and the row's later
        /// changes (the API never saw the row, so there is nothing to delete there).
        package var takenBack: [Mutation] = []
        package var changes = RebaseChanges()
    }

    /// Records the job's local writes and applies the pending mutations of the rows the job wrote
    /// (and of the rows it queued or renewed mutations of), old and new, in commit order, on top.
    package func finish(in transaction: some StoreTransaction) async throws -> Finished {
        var finished = Finished()
        guard exists else { return finished }
        for rekey in work.rekeyed {
            // The row's own mutations, and those of the entities whose foreign keys may name it.
            let name = mapping.maps[rekey.entity].entity.name
            let children = Set(mapping.maps.filter { map in
                map.entity.relationships.contains { $0.kind == .toOne && $0.destination == name }
            }.map(\.entity.name)).sorted()
            var condition = "(entity = ? AND key = ?)"
            if !children.isEmpty { condition += " OR entity IN (" + children.map { _ in "?" }.joined(separator: ", ") + ")" }
            var related = try await pending(condition, [.string(name), .string(OutboxTable.text(of: rekey.from))]
                                            + children.map(AttributeValue.string), in: transaction)
            try await Self.rekey(rekey.entity, from: rekey.from, to: rekey.to, mapping: mapping, pending: &related,
                                 in: transaction, changes: &finished.changes)
        }
        // The API's rows as it answered them, before the pending changes go on top again.
        for version in work.versions {
            let entity = mapping.maps[version.entity].entity
            guard let digest = try await Self.digest(of: version.key, entity, in: transaction) else { continue }
            let keyText = OutboxTable.text(of: version.key)
            try await transaction.execute("DELETE FROM \(OutboxTable.versions) WHERE entity = ? AND key = ?",
                                          [.string(entity.name), .string(keyText)])
            try await transaction.execute("INSERT INTO \(OutboxTable.versions) (entity, key, etag, digest) VALUES (?, ?, ?, ?)",
                                          [.string(entity.name), .string(keyText), .string(version.etag), .string(digest)])
            // The row's later changes were made on the version this answer replaced.
            try await transaction.execute("UPDATE \(OutboxTable.name) SET precondition = ? WHERE entity = ? AND key = ? "
                                          + "AND state = 'pending' AND precondition IS NOT NULL",
                                          [.string(version.etag), .string(entity.name), .string(keyText)])
        }
        for write in work.queued {
            let entity = mapping.maps[write.entity].entity
            let kind: Mutation.Kind
            let key: AttributeValue
            if let given = write.key {
                key = given
                if write.isDelete {
                    if let taken = try await takingBack(write.entity, key: given, in: transaction) {
                        finished.takenBack += taken
                        continue
                    }
                    kind = .delete
                } else {
                    let existing = try await transaction.select("SELECT 1 FROM \(entity.tableName.quotedIdentifier) WHERE "
                                                                + OutboxApply.keyCondition(entity), OutboxApply.keyArguments(given, entity),
                                                                types: [.integer])
                    kind = existing.isEmpty ? .create : .update
                    // A change of a row whose create no push has taken goes into that create: the API
                    // gets the row once, as it reads by then (the rebase below applies it).
                    if kind == .update, var create = try await untakenCreate(write.entity, key: given, in: transaction) {
                        for (name, value) in write.changes where !entity.primaryKeyNames.contains(name) || create.changes[name] != nil {
                            create.changes[name] = value
                        }
                        try await transaction.execute("UPDATE \(OutboxTable.name) SET changes = ? WHERE id = ?",
                                                      [.string(OutboxTable.text(of: create.changes)), .integer(create.id)])
                        finished.queued.append(create)
                        continue
                    }
                }
            } else {
                key = try await Self.temporaryKey(entity, in: transaction)
                kind = .create
            }
            if kind == .create {
                let keyNames = Set(entity.primaryKeyNames)
                let missing = entity.attributes.filter { !$0.isNullable && !keyNames.contains($0.name) && write.changes[$0.name] == nil }
                if !missing.isEmpty {
                    throw SyncError(.invalidWrite, "a new \(entity.name) needs " + missing.map { "'\($0.name)'" }.joined(separator: ", ")
                                    + " (not nullable); nothing was written")
                }
            }
            // The version the change is made on: the ETag the API gave the row, if the row still reads
            // as it did then; else the one an earlier pending change of the row was made on.
            var precondition: String?
            if kind != .create {
                precondition = try await pending("entity = ? AND key = ?", [.string(entity.name), .string(OutboxTable.text(of: key))],
                                                 in: transaction).last?.precondition
                let recorded = try await transaction.select("SELECT etag, digest FROM \(OutboxTable.versions) WHERE entity = ? AND key = ?",
                                                            [.string(entity.name), .string(OutboxTable.text(of: key))],
                                                            types: [.string, .string])
                if precondition == nil, case .string(let etag)? = recorded.first?.first, case .string(let digest)? = recorded.first?.last,
                   try await Self.digest(of: key, entity, in: transaction) == digest {
                    precondition = etag
                }
                // Else the version the entity's version attribute holds (the API's, as last synced).
                if precondition == nil, let version = try await Self.version(of: key, entity, in: transaction) {
                    precondition = version
                }
            }
            let rows = try await transaction.select(
                "INSERT INTO \(OutboxTable.name) (entity, key, kind, changes, idempotency_key, state, created, precondition) "
                + "VALUES (?, ?, ?, ?, ?, 'pending', ?, ?) RETURNING id",
                [.string(entity.name), .string(OutboxTable.text(of: key)), .string(kind.rawValue),
                 .string(OutboxTable.text(of: write.changes)), .string(write.idempotencyKey),
                 .double(write.createdAt.timeIntervalSince1970), precondition.map(AttributeValue.string) ?? .null], types: [.integer])
            guard case .integer(let id)? = rows.first?.first else {
                throw SyncError(.database, "the outbox gave no number to the mutation of \(entity.name) \(key)")
            }
            // The date as the outbox reads it back (Unix seconds), so the two compare equal.
            var mutation = Mutation(id: id, entity: entity.name, key: key, kind: kind, changes: write.changes,
                                    idempotencyKey: write.idempotencyKey,
                                    createdAt: Date(timeIntervalSince1970: write.createdAt.timeIntervalSince1970))
            mutation.precondition = precondition
            finished.queued.append(mutation)
        }
        // Only the rows this job wrote lost their pending changes (the others still read with
        // them): those rows' mutations are applied again, and those of the rows of the mutations
        // this job queued or made pending again.
        var rows = Set<String>()
        for (entity, changes) in try await transaction.changesSoFar() {
            for key in changes.inserted { rows.insert(Self.row(entity, key)) }
            for key in changes.updated { rows.insert(Self.row(entity, key)) }
            for key in changes.deleted { rows.insert(Self.row(entity, key)) }
        }
        for rekey in work.rekeyed { rows.insert(Self.row(mapping.maps[rekey.entity].entity.name, rekey.to)) }
        // A row with a mutation queued or made pending again has all its pending mutations applied,
        // in order, so that a later one still wins over an earlier one made pending again.
        for mutation in finished.queued { rows.insert(Self.row(mutation.entity, mutation.key)) }
        let renewed = work.retried.map(\.id) + work.reissued.map(\.id)
        if !renewed.isEmpty {
            for mutation in try await pending("id IN (" + renewed.map { _ in "?" }.joined(separator: ", ") + ")",
                                              renewed.map(AttributeValue.integer), in: transaction) {
                rows.insert(Self.row(mutation.entity, mutation.key))
            }
        }
        guard !rows.isEmpty else { return finished }
        for mutation in try await pending(of: rows, in: transaction) {
            try await OutboxApply.apply(mutation, mapping: mapping, in: transaction, into: &finished.changes)
        }
        return finished
    }

    /// A local delete of a row the API has never seen: when the row's mutations begin with a
    /// pending create that no push has taken (``Mutation/sentAt``), they leave the outbox and the
    /// row is deleted, with nothing to send; returns them. `nil` (the delete is queued) when a push
    /// has taken the create (the API may have the row), or when another row's pending change names
    /// this one in a foreign key (sent after the create, it takes the API's key; the API then
    /// decides what its delete does to it).
    private func takingBack(_ index: Int, key: AttributeValue, in transaction: some StoreTransaction) async throws -> [Mutation]? {
        let entity = mapping.maps[index].entity
        let keyText = OutboxTable.text(of: key)
        let mutations = try await rowMutations(entity, keyText, in: transaction)
        guard let first = mutations.first, first.kind == .create, first.state == .pending, first.sentAt == nil else { return nil }
        for map in mapping.maps {
            let columns = map.entity.relationships.filter { $0.kind == .toOne && $0.destination == entity.name }.compactMap(\.foreignKey)
            guard !columns.isEmpty else { continue }
            let naming = try await pending("entity = ?", [.string(map.entity.name)], in: transaction).contains { mutation in
                columns.contains { column in mutation.changes[column].map { !$0.isNull && OutboxTable.text(of: $0) == keyText } ?? false }
            }
            if naming { return nil }
        }
        try await transaction.execute("DELETE FROM \(OutboxTable.name) WHERE entity = ? AND key = ?", [.string(entity.name), .string(keyText)])
        try await transaction.delete(entity: index, key: key)
        return mutations
    }

    /// The row's create when it is the row's one mutation, pending, and no push has taken it.
    private func untakenCreate(_ index: Int, key: AttributeValue, in transaction: some StoreTransaction) async throws -> Mutation? {
        let mutations = try await rowMutations(mapping.maps[index].entity, OutboxTable.text(of: key), in: transaction)
        guard mutations.count == 1, let create = mutations.first, create.kind == .create, create.state == .pending,
              create.sentAt == nil else { return nil }
        return create
    }

    /// Every mutation of one row, pending or rejected, in commit order.
    private func rowMutations(_ entity: Entity, _ keyText: String, in transaction: some StoreTransaction) async throws -> [Mutation] {
        try await transaction.select("SELECT \(OutboxTable.columns) FROM \(OutboxTable.name) WHERE entity = ? AND key = ? ORDER BY id",
                                     [.string(entity.name), .string(keyText)], types: OutboxTable.types)
            .compactMap { OutboxTable.decode($0, schema: mapping.schema) }
    }

    /// Moves what refers to `entity`'s row `from` to the row `to`: the foreign keys of to-one
    /// relationships, the links of join tables, the pending mutations of that row and the
    /// foreign keys their changes set; then deletes the row `from`.
    static func rekey(_ entity: Int, from: AttributeValue, to: AttributeValue, mapping: SchemaMapping,
                      pending: inout [Mutation], in transaction: some StoreTransaction, changes: inout RebaseChanges) async throws {
        let name = mapping.maps[entity].entity.name
        // Foreign keys that point at the temporary row, and the links that name it.
        var foreignKeys: [String: [String]] = [:]
        for map in mapping.maps {
            for relationship in map.entity.relationships where relationship.kind == .toOne && relationship.destination == name {
                guard let column = relationship.foreignKey else { continue }
                foreignKeys[map.entity.name, default: []].append(column)
                let keys = map.entity.primaryKeyAttributes
                let moved = try await transaction.select(
                    "UPDATE \(map.entity.tableName.quotedIdentifier) SET \(column.quotedIdentifier) = ? WHERE \(column.quotedIdentifier) = ? "
                    + "RETURNING " + keys.map(\.name.quotedIdentifier).joined(separator: ", "), [to, from], types: keys.map(\.type))
                for row in moved {
                    changes.entities[map.entity.name, default: EntityChanges()].updated.append(keys.count > 1 ? .compositeKey(row) : row[0])
                }
            }
        }
        for join in mapping.schema.joinTables {
            for (index, owner) in join.entities.enumerated() where owner == name {
                let column = join.columns[index].quotedIdentifier
                try await transaction.execute("UPDATE \(join.name.quotedIdentifier) SET \(column) = ? WHERE \(column) = ?", [to, from])
            }
        }
        // The pending mutations: of the row itself, and those that set a foreign key to it.
        for index in pending.indices {
            var mutation = pending[index]
            if mutation.entity == name && mutation.key == from { mutation.key = to }
            for column in foreignKeys[mutation.entity] ?? [] where mutation.changes[column] == from { mutation.changes[column] = to }
            guard mutation != pending[index] else { continue }
            pending[index] = mutation
            try await transaction.execute("UPDATE \(OutboxTable.name) SET key = ?, changes = ? WHERE id = ?",
                                          [.string(OutboxTable.text(of: mutation.key)), .string(OutboxTable.text(of: mutation.changes)),
                                           .integer(mutation.id)])
        }
        guard from != to else { return }
        let definition = mapping.maps[entity].entity
        let existed = try await transaction.select("SELECT 1 FROM \(definition.tableName.quotedIdentifier) WHERE "
                                                   + OutboxApply.keyCondition(definition), OutboxApply.keyArguments(from, definition),
                                                   types: [.integer])
        guard !existed.isEmpty else { return }
        try await transaction.delete(entity: entity, key: from)
        changes.rekeyed[name, default: []].append(KeyChange(from: from, to: to))
        if transaction.dialect == .sqlite {
            // Other processes learn of an SQLite file's commits without their keys (they re-read):
            // the log tells them which rows only changed key (PostgreSQL's NOTIFY carries it).
            for statement in OutboxTable.rekeyLog { try await transaction.execute(statement, []) }
            try await transaction.execute("INSERT INTO \(OutboxTable.rekeys) (entity, from_key, to_key) VALUES (?, ?, ?)",
                                          [.string(name), .string(OutboxTable.text(of: from)), .string(OutboxTable.text(of: to))])
            try await transaction.execute("DELETE FROM \(OutboxTable.rekeys) WHERE seq <= (SELECT max(seq) FROM \(OutboxTable.rekeys)) - ?",
                                          [.integer(OutboxTable.rekeysKept)])
        }
    }

    /// The row's version as an `If-Match` value (`"3"`): its ``Entity/versionAttribute``'s value,
    /// or `nil` when the entity declares none, or the row has none.
    static func version(of key: AttributeValue, _ entity: Entity, in transaction: some StoreTransaction) async throws -> String? {
        guard let name = entity.versionAttribute, let attribute = entity.attribute(named: name) else { return nil }
        let rows = try await transaction.select("SELECT \(name.quotedIdentifier) FROM \(entity.tableName.quotedIdentifier) WHERE "
                                                + OutboxApply.keyCondition(entity), OutboxApply.keyArguments(key, entity),
                                                types: [attribute.type])
        return rows.first?.first.flatMap(Mutation.versionTag)
    }

    /// A digest of the row `key` of `entity` as stored (every column), or `nil` when there is no
    /// such row: whether a row still reads as it did when the API gave it an ETag.
    static func digest(of key: AttributeValue, _ entity: Entity, in transaction: some StoreTransaction) async throws -> String? {
        let columns = entity.attributes.map(\.name.quotedIdentifier).joined(separator: ", ")
        let rows = try await transaction.select("SELECT \(columns) FROM \(entity.tableName.quotedIdentifier) WHERE "
                                                + OutboxApply.keyCondition(entity), OutboxApply.keyArguments(key, entity),
                                                types: entity.attributes.map(\.type))
        guard let row = rows.first else { return nil }
        // FNV-1a over the values' JSON text.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in JSONValue.array(row.map(\.jsonValue)).serializedBytes() {
            hash = (hash ^ UInt64(byte)) &* 0x0100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    /// A key for a new row the API has not numbered yet: one below every stored integer key (and
    /// below zero), or `local-` and a UUID for a text key.
    ///
    /// - Throws: ``SyncError`` `.invalidWrite` for a composite key, whose parts the application gives.
    static func temporaryKey(_ entity: Entity, in transaction: some StoreTransaction) async throws -> AttributeValue {
        guard !entity.hasCompositeKey else {
            throw SyncError(.invalidWrite, "\(entity.name) has a composite primary key (\(entity.primaryKeyNames.joined(separator: ", "))): "
                            + "a new row needs all its parts; nothing was written")
        }
        switch entity.primaryKeyAttribute.type {
        case .integer:
            let column = entity.primaryKey.quotedIdentifier
            let rows = try await transaction.select("SELECT min(\(column)) FROM \(entity.tableName.quotedIdentifier)", [], types: [.integer])
            var lowest: Int64 = 0
            if case .integer(let value)? = rows.first?.first { lowest = min(value, 0) }
            guard lowest > Int64.min else {
                throw SyncError(.invalidWrite, "\(entity.name): no integer key is left below \(lowest) for a new row; nothing was written")
            }
            return .integer(lowest - 1)
        case .string:
            return .string("local-" + UUID().uuidString.lowercased())
        default:
            throw SyncError(.invalidWrite, "\(entity.name)'s key '\(entity.primaryKey)' is \(entity.primaryKeyAttribute.type): "
                            + "a new row needs its key given; nothing was written")
        }
    }
}

/// What a rebase changed, by entity name, to fold into the transaction's change set.
package struct RebaseChanges: Sendable {
    package var entities: [String: EntityChanges] = [:]
    /// The rows that took the API's key in place of a temporary one, by entity name.
    package var rekeyed: [String: [KeyChange]] = [:]

    package init() {}

    package var isEmpty: Bool { entities.isEmpty && rekeyed.isEmpty }

    /// Folds the rebase's changes into `changes`, which the transaction's other steps made before
    /// it: a row the transaction inserted and the rebase deleted did not change at all; a row it
    /// deleted and the rebase inserted again changed; a row the rebase changed is updated unless
    /// the transaction inserted it. A row whose temporary key gave way to the API's (the row
    /// under the API's key inserted, the one under the temporary key deleted) is one row
    /// updated and rekeyed; when a row under the API's key was there before (a sync brought it
    /// before the confirmation), the temporary one stays deleted and that one updated.
    package func fold(into changes: inout [String: EntityChanges]) {
        for (name, renames) in rekeyed {
            guard var change = changes[name] else { continue }
            for rename in renames where change.inserted.contains(rename.to) && change.deleted.contains(rename.from) {
                change.inserted.normalize(excluding: PrimaryKeys([rename.to]))
                change.deleted.normalize(excluding: PrimaryKeys([rename.from]))
                if !change.updated.contains(rename.to) { change.updated.append(rename.to) }
                change.rekeyed.append(rename)
            }
            changes[name] = change
        }
        for (name, rebase) in entities {
            var change = changes[name] ?? EntityChanges()
            for key in rebase.deleted where change.inserted.contains(key) {
                let gone = PrimaryKeys([key])
                change.inserted.normalize(excluding: gone)
                change.deleted.normalize(excluding: gone)
                change.updated.normalize(excluding: gone)
            }
            for key in rebase.inserted {
                if change.deleted.contains(key) {
                    change.deleted.normalize(excluding: PrimaryKeys([key]))
                    change.updated.append(key)
                } else if !change.inserted.contains(key) {
                    change.inserted.append(key)
                }
            }
            for key in rebase.updated where !change.inserted.contains(key) && !change.updated.contains(key) {
                change.updated.append(key)
            }
            if change.isEmpty { changes[name] = nil } else { changes[name] = change }
        }
    }
}

/// Applying one pending mutation to its row with plain SQL, the same on both stores.
enum OutboxApply {
    /// `"id" = ?`, or each part of a composite key.
    static func keyCondition(_ entity: Entity) -> String {
        entity.primaryKeyNames.map { "\($0.quotedIdentifier) = ?" }.joined(separator: " AND ")
    }

    /// The key's values, in ``keyCondition(_:)``'s order.
    static func keyArguments(_ key: AttributeValue, _ entity: Entity) -> [AttributeValue] {
        if entity.hasCompositeKey { return key.compositeKeyParts ?? [key] }
        return [key]
    }

    /// Makes `mutation`'s change again: sets the attributes it changes on its row where they
    /// differ (inserting the row for a create that is not there), or deletes its row.
    static func apply(_ mutation: Mutation, mapping: SchemaMapping, in transaction: some StoreTransaction,
                      into changes: inout RebaseChanges) async throws {
        guard let index = mapping.maps.firstIndex(where: { $0.entity.name == mutation.entity }) else { return }
        let entity = mapping.maps[index].entity
        let table = entity.tableName.quotedIdentifier
        let keyArguments = keyArguments(mutation.key, entity)
        if mutation.kind == .delete {
            let existed = try await transaction.select("SELECT 1 FROM \(table) WHERE \(keyCondition(entity))", keyArguments,
                                                       types: [.integer])
            guard !existed.isEmpty else { return }
            try await transaction.delete(entity: index, key: mutation.key)
            changes.entities[entity.name, default: EntityChanges()].deleted.append(mutation.key)
            return
        }
        let keyNames = Set(entity.primaryKeyNames)
        let names = mutation.changes.keys.filter { !keyNames.contains($0) && entity.attribute(named: $0) != nil }.sorted()
        let values = names.map { mutation.changes[$0] ?? .null }
        if !names.isEmpty {
            let set = names.map { "\($0.quotedIdentifier) = ?" }.joined(separator: ", ")
            let differs = names.map { "\($0.quotedIdentifier) IS DISTINCT FROM ?" }.joined(separator: " OR ")
            let updated = try await transaction.select(
                "UPDATE \(table) SET \(set) WHERE \(keyCondition(entity)) AND (\(differs)) RETURNING 1",
                values + keyArguments + values, types: [.integer])
            if !updated.isEmpty {
                changes.entities[entity.name, default: EntityChanges()].updated.append(mutation.key)
                return
            }
        }
        guard mutation.kind == .create else { return }
        let columns = entity.primaryKeyNames + names
        let inserted = try await transaction.select(
            "INSERT INTO \(table) (\(columns.map(\.quotedIdentifier).joined(separator: ", "))) VALUES ("
            + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ") ON CONFLICT DO NOTHING RETURNING 1",
            keyArguments + values, types: [.integer])
        if !inserted.isEmpty { changes.entities[entity.name, default: EntityChanges()].inserted.append(mutation.key) }
    }
}
