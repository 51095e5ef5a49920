import Foundation
import ReplicaCore

/// What the outbox's sender does when the API refuses a local change because the row changed
/// on its side since the change was made: a 412 Precondition Failed to the change's `If-Match`
/// (``Mutation/precondition``), or a 409 Conflict.
///
/// ```swift
/// configuration.conflictPolicies["Person"] = .mergeFields
/// configuration.conflictPolicies["Invoice"] = .resolve { conflict in
///     conflict.server?["status"] == .string("paid") ? .serverWins : .clientWins
/// }
/// ```
public enum ConflictPolicy: Sendable {
    /// The API's row stands: the change is rejected (listed with the API's answer, to retry or
    /// discard) and the row read again from the API.
    case serverWins
    /// The change stands: it is sent again without a precondition, over whatever the API has.
    case clientWins
    /// The API's row is read again and the change sent again on it (with its new ETag): the
    /// attributes the change sets win, the others are the API's.
    case mergeFields
    /// The application decides, given the change and the API's row.
    case resolve(@Sendable (Conflict) async throws -> ConflictResolution)
}

/// A local change the API refused because the row changed on its side.
public struct Conflict: Sendable {
    /// The refused change.
    public var mutation: Mutation
    /// The API's answer: 412 or 409, and its body.
    public var status: Int
    public var body: String
    /// The API's row as it is now, by attribute name; `nil` when the API no longer has it.
    public var server: [String: AttributeValue]?

    public init(mutation: Mutation, status: Int, body: String, server: [String: AttributeValue]?) {
        self.mutation = mutation
        self.status = status
        self.body = body
        self.server = server
    }
}

/// What a ``ConflictPolicy/resolve(_:)`` closure decided.
public enum ConflictResolution: Sendable {
    /// As ``ConflictPolicy/serverWins``.
    case serverWins
    /// As ``ConflictPolicy/clientWins``.
    case clientWins
    /// Send these changes (by attribute name) on the API's current row, in place of the
    /// mutation's own: a merge of the application's making.
    case send([String: AttributeValue])
}

extension Mutation.Rejection {
    /// The API's answer read as an error body (as ``ClientError/init(status:headers:body:request:)``
    /// reads one): its message, field errors and details, for showing the user what to correct.
    ///
    /// ```swift
    /// for mutation in try await store.outbox(.rejected) {
    ///     print(mutation.rejection?.error.fieldErrors["title"] ?? [])   // ["can't be blank"]
    /// }
    /// ```
    public var error: ClientError { ClientError(status: status, body: Array(body.utf8)) }
}
