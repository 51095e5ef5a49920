import Foundation
import Logging
import PostgresNIO
import ReplicaCore

/// How a commit is announced to other processes: `NOTIFY replica_changes` with a small JSON
/// payload, sent by PostgreSQL only when the transaction commits.
///
/// The payload holds the change set's keys when they fit (PostgreSQL's limit is 8,000 bytes):
/// `{"origin": "…", "id": 42, "changes": {"Person": {"inserted": [1, 2], "updated": [], "deleted": [3]}}}`
/// (and `"rekeyed": [[-1, 201]]` for rows that took the API's key in place of a temporary one).
/// A larger change set is written to the `replica_changes` table in the same transaction, and
/// the payload says so (`"stored": true`). One of more than ``resetThreshold`` keys is stored as
/// a reset of its entities (`"reset": ["Person"]`): live results re-read them instead.
enum ChangeAnnouncement {
    static let channel = "replica_changes"
    /// Payloads larger than this go to the changes table.
    static let payloadLimit = 7_000
    /// Change sets with more keys than this are announced as a reset of their entities.
    static let resetThreshold = 100_000
    /// Stored change sets older than this are deleted by later commits.
    static let retention = "10 minutes"

    /// Numbers the change set from the shared sequence and announces it; returns its number.
    static func announce(_ changes: [String: EntityChanges], origin: String, on session: PostgresWriteSession) async throws -> UInt64 {
        var id: Int64 = 0
        let next = PostgresQuery(unsafeSQL: "SELECT nextval('\(PostgresMigration.changeSequence)')")
        for try await value in try await session.connection.query(next, logger: session.logger).decode(Int64.self) { id = value }
        let keyCount = changes.values.reduce(0) { $0 + $1.inserted.count + $1.updated.count + $1.deleted.count }
        let body = encode(changes, reset: keyCount > resetThreshold)
        var payload: JSONObject = ["origin": .string(origin), "id": .int(id)]
        let bodyText = body.serialized()
        if bodyText.utf8.count + 100 <= payloadLimit {
            payload["changes"] = body
        } else {
            try await session.execute("DELETE FROM \(PostgresMigration.changesTable) WHERE committed < now() - interval '\(retention)'")
            try await session.execute("INSERT INTO \(PostgresMigration.changesTable) (id, body) VALUES (?, ?)",
                                      [.integer(id), .string(bodyText)])
            payload["stored"] = .bool(true)
        }
        try await session.execute("SELECT pg_notify(?, ?)", [.string(channel), .string(JSONValue.object(payload).serialized())])
        return UInt64(max(0, id))
    }

    /// The change set as JSON: keys by entity and kind, or the entities to reset.
    static func encode(_ changes: [String: EntityChanges], reset: Bool) -> JSONValue {
        if reset { return .object(["reset": .array(changes.keys.sorted().map { .string($0) })]) }
        var entities = JSONObject()
        for (name, change) in changes {
            var kinds: JSONObject = [
                "inserted": keysJSON(change.inserted),
                "updated": keysJSON(change.updated),
                "deleted": keysJSON(change.deleted),
            ]
            // A rekeyed row: `[from, to]`.
            if !change.rekeyed.isEmpty {
                kinds["rekeyed"] = .array(change.rekeyed.map { .array([keyJSON($0.from), keyJSON($0.to)]) })
            }
            entities[name] = .object(kinds)
        }
        return .object(entities)
    }

    /// One key as JSON: a number, a string, or the array of a composite key's parts.
    static func keyJSON(_ key: AttributeValue) -> JSONValue {
        guard case .array(let items) = keysJSON(PrimaryKeys([key])), let first = items.first else { return .null }
        return first
    }

    static func keysJSON(_ keys: PrimaryKeys) -> JSONValue {
        .array(keys.integers.map { .int($0) } + keys.strings.map { .string($0) }
               + keys.tuples.map { .array($0.map(\.keyPartJSON)) })
    }

    /// What a payload announces: its origin, number, and the change set (`nil` when stored).
    struct Received {
        var origin: String
        var id: Int64
        var changes: JSONValue?
        var stored: Bool
    }

    static func parse(_ payload: String) -> Received? {
        guard let json = try? JSONValue(parsing: payload), case .object(let object) = json,
              case .string(let origin)? = object["origin"], case .int(let id)? = object["id"]
        else { return nil }
        var stored = false
        if case .bool(true)? = object["stored"] { stored = true }
        return Received(origin: origin, id: id, changes: object["changes"], stored: stored)
    }

    /// The change set of an announcement's JSON body.
    static func decode(_ body: JSONValue, id: Int64) -> ChangeSet {
        var entities: [String: EntityChanges] = [:]
        guard case .object(let object) = body else { return ChangeSet(sequence: UInt64(max(0, id))) }
        if case .array(let reset)? = object["reset"] {
            for case .string(let name) in reset {
                var change = EntityChanges()
                change.isUnknown = true
                entities[name] = change
            }
            return ChangeSet(sequence: UInt64(max(0, id)), entities: entities)
        }
        for (name, value) in object {
            guard case .object(let kinds) = value else { continue }
            var change = EntityChanges()
            change.inserted = keys(kinds["inserted"])
            change.updated = keys(kinds["updated"])
            change.deleted = keys(kinds["deleted"])
            if case .array(let pairs)? = kinds["rekeyed"] {
                for case .array(let pair) in pairs where pair.count == 2 {
                    guard let from = keys(.array([pair[0]])).values.first, let to = keys(.array([pair[1]])).values.first else { continue }
                    change.rekeyed.append(KeyChange(from: from, to: to))
                }
            }
            entities[name] = change
        }
        return ChangeSet(sequence: UInt64(max(0, id)), entities: entities)
    }

    static func keys(_ value: JSONValue?) -> PrimaryKeys {
        guard case .array(let items)? = value else { return PrimaryKeys() }
        return PrimaryKeys(items.compactMap { item -> AttributeValue? in
            switch item {
            case .int(let i): return .integer(i)
            case .string(let s): return .string(s)
            // A composite key: the array of its parts.
            case .array: return AttributeValue.json(item).compositeKeyParts.map(AttributeValue.compositeKey)
            default: return nil
            }
        })
    }
}
