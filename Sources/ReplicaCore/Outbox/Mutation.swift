import Foundation

/// One local write waiting in the store's outbox (table `replica_outbox`) to reach the API, or
/// one the API refused.
///
/// ``ReplicaStore/saveLocally(_:_:)`` and ``ReplicaStore/deleteLocally(_:key:)`` change the row
/// and add its mutation in one transaction, and return at once, network or not. The row reads
/// as changed from then on, in queries and live result sets alike, and every later sync writes
/// the server's rows first and then this change again on top, until the API confirms it.
///
/// ```swift
/// let mutation = try await store.saveLocally("Post", ["id": .integer(7), "title": .string("Draft")])
/// mutation.kind             // .update (the row existed), or .create
/// mutation.idempotencyKey   // "5B0E…": sent as `Idempotency-Key` with every attempt
/// try await store.outbox()  // [mutation], in commit order
/// ```
public struct Mutation: Sendable, Hashable, Identifiable, CustomStringConvertible {
    /// What the mutation does to its row.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The row did not exist: the API is asked to create it (`POST` to the collection).
        case create
        /// The row existed: the API is asked to change the attributes in ``Mutation/changes``.
        case update
        /// The API is asked to delete the row.
        case delete
    }

    /// Where the mutation stands.
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// Waiting to be sent, or being sent; its change shows in the store.
        case pending
        /// The API refused it (a 4xx other than 408 and 429); its change is no longer applied.
        /// It stays listed, with ``Mutation/rejection``, until it is retried or discarded.
        case rejected
    }

    /// Why the API refused a mutation: the status and the body it answered with.
    public struct Rejection: Sendable, Hashable {
        /// The HTTP status (`422`, `404`, …).
        public var status: Int
        /// The response body as text (an API's error object, with its field errors).
        public var body: String

        public init(status: Int, body: String) {
            self.status = status
            self.body = body
        }
    }

    /// The outbox's number for the mutation: increasing in commit order, per store.
    public var id: Int64
    /// The entity's name.
    public var entity: String
    /// The row's primary key (a ``AttributeValue/compositeKey(_:)`` for a composite key).
    public var key: AttributeValue
    public var kind: Kind
    /// The attributes the mutation sets, by attribute name (empty for a delete).
    public var changes: [String: AttributeValue]
    /// Sent as the `Idempotency-Key` header with every attempt, so an API that honours it applies
    /// the mutation once however often it is sent.
    public var idempotencyKey: String
    public var state: State
    /// When it was queued.
    public var createdAt: Date
    /// How many times it was sent.
    public var attempts: Int
    /// Why the last attempt failed (a connection error, a 503), while it is still pending.
    public var lastError: String?
    /// What the API answered when it refused the mutation.
    public var rejection: Rejection?
    /// The `If-Match` sent with an update or a delete: the ETag the API gave the row as it read
    /// when the change was made (from the API's answer to an earlier write of it); `nil` when
    /// the row's version is not known, and then the change is sent without a precondition.
    public var precondition: String?
    /// When a push first took this create to send (it may have reached the API since); `nil`
    /// while none has, and then deleting the row locally takes the create back instead of
    /// queueing a `DELETE` (``ReplicaStore/deleteLocally(_:key:)``). Always `nil` for an update
    /// or a delete.
    public var sentAt: Date?

    public init(id: Int64, entity: String, key: AttributeValue, kind: Kind, changes: [String: AttributeValue],
                idempotencyKey: String, state: State = .pending, createdAt: Date, attempts: Int = 0,
                lastError: String? = nil, rejection: Rejection? = nil) {
        self.id = id
        self.entity = entity
        self.key = key
        self.kind = kind
        self.changes = changes
        self.idempotencyKey = idempotencyKey
        self.state = state
        self.createdAt = createdAt
        self.attempts = attempts
        self.lastError = lastError
        self.rejection = rejection
    }

    /// `#3 update Post 7 (title)`, `#4 delete Post 8 rejected: 404`.
    public var description: String {
        var text = "#\(id) \(kind.rawValue) \(entity) \(key)"
        if !changes.isEmpty { text += " (" + changes.keys.sorted().joined(separator: ", ") + ")" }
        if let rejection { text += " rejected: \(rejection.status)" } else if state == .rejected { text += " rejected" }
        return text
    }
}

/// The outbox at a glance: what waits, since when, what the API refused, and why the last
/// attempt failed. ``ReplicaStore/outboxStatus()`` reads it; a `ReplicaService` that sends the
/// outbox publishes it after each push.
///
/// ```swift
/// let status = try await store.outboxStatus()
/// print(status)   // 2 pending (oldest 12 s), 1 rejected; last error: connection: ... (GET ...)
/// ```
public struct OutboxStatus: Sendable, Hashable, CustomStringConvertible {
    /// Mutations waiting to be sent.
    public var pending: Int
    /// Mutations the API refused, waiting for a retry or a discard.
    public var rejected: Int
    /// When the oldest pending mutation was queued; `nil` when none is pending.
    public var oldestPending: Date?
    /// Why the latest failed attempt of a pending mutation failed; `nil` when none failed.
    public var lastError: String?
    /// When this status was read.
    public var date: Date

    public init(pending: Int = 0, rejected: Int = 0, oldestPending: Date? = nil, lastError: String? = nil, date: Date = Date()) {
        self.pending = pending
        self.rejected = rejected
        self.oldestPending = oldestPending
        self.lastError = lastError
        self.date = date
    }

    /// How long the oldest pending mutation has waited, at ``date``.
    public var oldestPendingAge: Duration? {
        oldestPending.map { .milliseconds(Int64((date.timeIntervalSince($0) * 1000).rounded())) }
    }

    public var description: String {
        var text = "\(pending) pending"
        if let age = oldestPendingAge {
            text += " (oldest \(Int64((Double(age.components.seconds) + Double(age.components.attoseconds) / 1e18).rounded())) s)"
        }
        text += ", \(rejected) rejected"
        if let lastError { text += "; last error: \(lastError)" }
        return text
    }
}

extension Mutation {
    /// A version the API gave an object (its ``Entity/versionAttribute``'s value) as an `If-Match`
    /// value: `3` → `"3"`; a text that is already an entity tag (`"abc"`, `W/"abc"`) stays as it
    /// is; `nil` for a null or another kind of value.
    ///
    /// ```swift
    /// Mutation.versionTag(.integer(3))   // "\"3\""
    /// ```
    package static func versionTag(_ value: AttributeValue) -> String? {
        switch value {
        case .integer(let number): return "\"\(number)\""
        case .string(let text) where text.hasPrefix("\"") || text.hasPrefix("W/\""): return text
        case .string(let text): return "\"\(text)\""
        default: return nil
        }
    }
}
