import Foundation

/// Local writes: queued in the store's outbox, shown at once, sent when the API can be reached.
///
/// Each call is one transaction of the store: the row changes and its ``Mutation`` is recorded
/// together, or neither happens. Queries, live result sets and change observers see the change
/// at once. Every later write transaction (a sync, an import, the confirmation of another
/// mutation) writes the server's rows first and then applies every pending mutation again on
/// top, in commit order, so a sync never takes a pending change away; a row a pending mutation
/// creates or changes is never deleted as stale.
///
/// ```swift
/// let draft = try await store.saveLocally("Post", ["title": .string("Offline"), "userID": .integer(1)])
/// draft.key                                  // .integer(-1): a temporary key until the API numbers it
/// try await store.pendingKeys("Post")        // [-1]
/// try await store.deleteLocally("Post", key: .integer(7))
/// ```
extension ReplicaStore {
    /// Saves `values` locally and queues the write for the API: a create when the row does not
    /// exist (`POST` to the collection), else an update of the attributes given. Without a key,
    /// the row gets a temporary one (`-1`, `-2`, … below every stored integer key, or `local-`
    /// and a UUID for a text key), replaced by the API's once it confirms the create. A change of
    /// a row whose create no push has taken yet goes into that create, which the API then gets
    /// once, with the row's values as they read by then (a draft completed in several saves is one
    /// `POST`); the mutation returned is then the create.
    ///
    /// ```swift
    /// let mutation = try await store.saveLocally("Post", ["id": .integer(7), "title": .string("Renamed")])
    /// mutation.kind   // .update
    /// ```
    ///
    /// - Parameters:
    ///   - entity: The entity's name.
    ///   - values: Attribute values by attribute name; each is converted to its attribute's type
    ///     (an ISO 8601 string to a date, an exact double to an integer).
    /// - Returns: The queued mutation, numbered (the row's create, when the change went into it).
    /// - Throws: ``SyncError``: `.unknownEntity`, `.invalidWrite` for an unknown attribute, a value
    ///   its attribute cannot hold, a missing required attribute of a new row or a composite key
    ///   not given, `.invalidKey`, `.database`. Nothing is written then.
    @discardableResult
    public func saveLocally(_ entity: String, _ values: [String: AttributeValue]) async throws -> Mutation {
        let index = try entityIndex(entity)
        let definition = mapping.maps[index].entity
        var changes: [String: AttributeValue] = [:]
        for (name, value) in values {
            guard let attribute = definition.attribute(named: name) else {
                throw SyncError(.invalidWrite, "\(definition.name) has no attribute '\(name)' (it has "
                                + definition.attributes.map(\.name).joined(separator: ", ") + "); nothing was written")
            }
            changes[name] = try Self.converted(value, for: attribute, of: definition)
        }
        let key = definition.key { changes[$0] }
        if let key, let problem = definition.keyProblem(key) { throw SyncError(.invalidKey, problem) }
        var job = WriteJob(source: "save \(definition.name) locally")
        job.outbox.queued = [OutboxWork.LocalWrite(entity: index, key: key, changes: changes, isDelete: false)]
        return try await queue(job)
    }

    /// Deletes a row locally and queues the deletion for the API (`DELETE` by key).
    ///
    /// A row the API has never seen is only deleted here: when the row was created locally and
    /// no push has taken its create yet (``Mutation/sentAt`` is `nil`), the create and the row's
    /// later changes leave the outbox, nothing is queued and nothing will be sent. Once a push
    /// has taken the create (it may have reached the API, even if no answer came), or while
    /// another row's pending change names this row in a foreign key, the `DELETE` is queued
    /// behind it.
    ///
    /// ```swift
    /// try await store.deleteLocally("Post", key: .integer(7))         // #12 delete Post 7
    /// let draft = try await store.saveLocally("Post", ["title": .string("Draft"), "userID": .integer(1)])
    /// try await store.deleteLocally("Post", key: draft.key)           // nil: the draft never leaves
    /// ```
    ///
    /// - Returns: The queued mutation, numbered; `nil` when the delete took back a create no push
    ///   had taken, so that there is nothing to send.
    /// - Throws: ``SyncError``: `.unknownEntity`, `.invalidKey`, `.database`. Nothing is written then.
    @discardableResult
    public func deleteLocally(_ entity: String, key: AttributeValue) async throws -> Mutation? {
        let index = try entityIndex(entity)
        let definition = mapping.maps[index].entity
        if let problem = definition.keyProblem(key) { throw SyncError(.invalidKey, problem) }
        var job = WriteJob(source: "delete \(definition.name) \(key) locally")
        job.outbox.queued = [OutboxWork.LocalWrite(entity: index, key: key, changes: [:], isDelete: true)]
        let outcome = try await transact(job)
        if let mutation = outcome.queued.first { return mutation }
        guard !outcome.takenBack.isEmpty else {
            throw SyncError(.database, "the outbox did not record the write", source: job.source)
        }
        return nil
    }

    private func queue(_ job: WriteJob) async throws -> Mutation {
        guard let mutation = try await transact(job).queued.first else {
            throw SyncError(.database, "the outbox did not record the write", source: job.source)
        }
        return mutation
    }

    /// Marks every pending create that no push has taken yet as taken now (``Mutation/sentAt``):
    /// a push does so before it reads what to send, so that a local delete never takes back a
    /// create the API may have.
    package func takeCreatesForSending() async throws {
        var work = OutboxWork()
        work.takenForSending = Date()
        _ = try await record(work, source: "push")
    }

    /// The outbox: mutations in `state` (all when `nil`), of `entity` (all when `nil`), in commit order.
    ///
    /// ```swift
    /// for mutation in try await store.outbox(.rejected) { print(mutation, mutation.rejection?.body ?? "") }
    /// ```
    ///
    /// - Throws: ``SyncError`` `.database`.
    public func outbox(_ state: Mutation.State? = nil, entity: String? = nil) async throws -> [Mutation] {
        let query = OutboxTable.select(state: state, entity: entity)
        return try await backend.readOutbox(query.sql, query.arguments, types: OutboxTable.types)
            .compactMap { OutboxTable.decode($0, schema: schema) }
    }

    /// The outbox at a glance: pending and rejected counts, the oldest pending mutation's age,
    /// the last failed attempt's error.
    ///
    /// ```swift
    /// let status = try await store.outboxStatus()
    /// if let age = status.oldestPendingAge, age > .seconds(300) { alert("writes stuck for \(age): \(status)") }
    /// ```
    ///
    /// - Throws: ``SyncError`` `.database`.
    public func outboxStatus() async throws -> OutboxStatus {
        let mutations = try await outbox()
        let pending = mutations.filter { $0.state == .pending }
        // The latest failure: of the mutation sent most recently that failed (the highest number
        // among those that carry one is as good as any, attempts being made in commit order).
        let failed = pending.last { $0.lastError != nil }
        return OutboxStatus(pending: pending.count, rejected: mutations.count - pending.count,
                            oldestPending: pending.map(\.createdAt).min(), lastError: failed?.lastError)
    }

    /// The keys of `entity`'s rows that pending mutations change: the rows a view marks as not yet
    /// confirmed by the API.
    ///
    /// ```swift
    /// let pending = try await store.pendingKeys("Post")
    /// for post in posts { print(pending.contains(post.primaryKey) ? "*" : " ", post["title"] ?? .null) }
    /// ```
    ///
    /// - Throws: ``SyncError`` `.database`.
    public func pendingKeys(_ entity: String) async throws -> PrimaryKeys {
        var keys = PrimaryKeys()
        for mutation in try await outbox(.pending, entity: entity) where !keys.contains(mutation.key) { keys.append(mutation.key) }
        return keys
    }

    /// Removes a mutation from the outbox without sending it. The row keeps its local change until
    /// the server's row is synced again.
    ///
    /// ```swift
    /// try await store.discardMutation(rejected.id)
    /// ```
    ///
    /// - Throws: ``SyncError`` `.invalidWrite` when the outbox has no mutation `id`; nothing changes then.
    public func discardMutation(_ id: Int64) async throws {
        _ = try await requireMutation(id)
        var job = WriteJob(source: "discard mutation #\(id)")
        job.outbox.discarded = [id]
        _ = try await transact(job)
    }

    /// Makes a rejected mutation pending again, with `changes` in place of its own when given (an
    /// update the API refused for a field, corrected): it is applied again at once and sent with
    /// the next push, under a new `Idempotency-Key` (the API may keep its refusal under the old one).
    ///
    /// ```swift
    /// try await store.retryMutation(rejected.id, changes: ["title": .string("A valid title")])
    /// ```
    ///
    /// - Throws: ``SyncError`` `.invalidWrite` when the outbox has no rejected mutation `id`, or a
    ///   change names an attribute the entity does not have; nothing changes then.
    public func retryMutation(_ id: Int64, changes: [String: AttributeValue]? = nil) async throws {
        let mutation = try await requireMutation(id)
        guard mutation.state == .rejected else {
            throw SyncError(.invalidWrite, "mutation #\(id) is \(mutation.state.rawValue), not rejected: there is nothing to retry")
        }
        var converted: [String: AttributeValue]?
        if let changes {
            let definition = try requireEntity(mutation.entity)
            var values: [String: AttributeValue] = [:]
            for (name, value) in changes {
                guard let attribute = definition.attribute(named: name) else {
                    throw SyncError(.invalidWrite, "\(definition.name) has no attribute '\(name)'; nothing was written")
                }
                values[name] = try Self.converted(value, for: attribute, of: definition)
            }
            converted = values
        }
        var job = WriteJob(source: "retry mutation #\(id)")
        job.outbox.retried = [(id, converted)]
        _ = try await transact(job)
    }

    /// Records what the sender learned in one transaction: `work`, and `deleting` a row (a
    /// rejected create's optimistic row).
    package func record(_ work: OutboxWork, deleting row: (entity: Int, key: AttributeValue)? = nil,
                        source: String) async throws -> ChangeSet {
        var job = WriteJob(source: source)
        job.outbox = work
        job.deletedRow = row
        return try await transact(job).changes
    }

    /// The mutation numbered `id` as the outbox holds it now (its key, precondition and
    /// idempotency key may have changed since it was read: a confirmation before it renames a
    /// temporary key and moves the row's precondition); `nil` when it left the outbox.
    ///
    /// - Throws: ``SyncError`` `.database`.
    package func mutation(_ id: Int64) async throws -> Mutation? {
        try await backend.readOutbox("SELECT \(OutboxTable.columns) FROM \(OutboxTable.name) WHERE id = ?", [.integer(id)],
                                     types: OutboxTable.types).compactMap { OutboxTable.decode($0, schema: schema) }.first
    }

    private func requireMutation(_ id: Int64) async throws -> Mutation {
        guard let mutation = try await mutation(id) else {
            throw SyncError(.invalidWrite, "the outbox has no mutation #\(id)")
        }
        return mutation
    }

    /// `value` as `attribute` stores it.
    static func converted(_ value: AttributeValue, for attribute: Attribute, of entity: Entity) throws -> AttributeValue {
        func refuse() -> SyncError {
            SyncError(.invalidWrite, "\(entity.name).\(attribute.name) is \(attribute.type.rawValue): cannot hold \(value); nothing was written")
        }
        switch (value, attribute.type) {
        case (.null, _):
            guard attribute.isNullable else {
                throw SyncError(.invalidWrite, "\(entity.name).\(attribute.name) cannot be null; nothing was written")
            }
            return .null
        case (.integer, .integer), (.double, .double), (.bool, .bool), (.date, .date), (.string, .string), (.data, .data),
             (.json, .json):
            return value
        case (.double(let d), .integer):
            guard let i = Int64(exactly: d) else { throw refuse() }
            return .integer(i)
        case (.integer(let i), .double): return .double(Double(i))
        case (.integer(let i), .bool) where i == 0 || i == 1: return .bool(i == 1)
        case (.integer(let i), .date): return .date(Date(timeIntervalSince1970: Double(i)))
        case (.double(let d), .date): return .date(Date(timeIntervalSince1970: d))
        case (.string(let s), .date):
            guard let date = ISO8601.date(from: s) else { throw refuse() }
            return .date(date)
        case (.string(let s), .data):
            guard let bytes = Base64.decode(s) else { throw refuse() }
            return .data(bytes)
        case (_, .json): return .json(value.jsonValue)
        default: throw refuse()
        }
    }
}
