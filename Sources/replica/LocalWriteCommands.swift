import ArgumentParser
import Foundation
import Replica

/// The options every outbox command takes: the store and its schema.
struct OutboxStoreOptions: ParsableArguments {
    @Option(help: "The SQLite database file (created when missing; needs --schema then), or a postgres:// URL.")
    var db: String

    @Option(help: "The schema file; without it the schema recorded in the database is used.")
    var schema: String?

    @Option(name: .customLong("busy-timeout"),
            help: "Seconds a write waits while another process writes to the database before it fails (writing nothing).")
    var busyTimeout: Double = StoreOptions().busyTimeout

    func validate() throws {
        try OptionChecks.busyTimeout(busyTimeout)
    }

    /// Opens the store, runs `body` and closes it; a database file this run created is removed
    /// again when `body` fails. A store's errors become one-line `CLIError`s.
    func using<T>(_ body: (any ReplicaStore) async throws -> T) async throws -> T {
        do {
            return try await CreatedFile.removingOnFailure(db) {
                try await OpenedStore.open(db: db, schema: schema, busyTimeout: busyTimeout).using { try await body($0.store) }
            }
        } catch let error as SyncError {
            throw CLIError(error.description)
        } catch let error as StoreError {
            throw CLIError(error.description)
        }
    }
}

struct SaveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "save",
        abstract: "Save an object locally and queue the write for the API (the outbox).",
        discussion: """
            JSON is one object in the API's shape (its JSON keys, as replica import reads them). The row changes at \
            once and the write waits in the store's outbox until replica push (or replica sync) sends it: a create \
            when the row does not exist (without a key it gets a temporary one, -1, -2, … or local-UUID, until the API \
            answers with its own), else an update of the attributes given. Prints the queued mutation.
            Example: replica save --db people.sqlite Person '{"name": "Ann", "numberOfKids": 2}'
            """
    )

    @OptionGroup var store: OutboxStoreOptions

    @Argument(help: "The entity's name.")
    var entity: String

    @Argument(help: "One JSON object in the API's shape.")
    var json: String

    func run() async throws {
        let mutation = try await store.using { store in
            let definition = try LocalWriteInput.entity(entity, in: store)
            let values = try LocalWriteInput.values(json, of: definition, in: store)
            return try await store.saveLocally(definition.name, values)
        }
        print("queued \(mutation)")
    }
}

struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete a row locally and queue the deletion for the API (the outbox).",
        discussion: """
            KEY is typed by the entity's key attribute; a composite key is a JSON array of its parts, in the \
            order of the schema's primaryKey. The row goes at once; replica push sends the DELETE. A row created \
            locally whose create no push has taken yet is only deleted here: its create leaves the outbox, and nothing is sent.
            Example: replica delete --db people.sqlite Person 7
            """
    )

    @OptionGroup var store: OutboxStoreOptions

    @Argument(help: "The entity's name.")
    var entity: String

    // Every word that is no option: a temporary key (-1) is no option either.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The row's key (a JSON array for a composite key).", valueName: "key"))
    var keyWords: [String] = []

    func validate() throws {
        guard keyWords.count == 1 else {
            throw ValidationError(keyWords.isEmpty ? "give the row's key after the entity" : "give one key, not '\(keyWords.joined(separator: " "))'")
        }
    }

    var key: String { keyWords.first ?? "" }

    func run() async throws {
        let (name, mutation) = try await store.using { store in
            let definition = try LocalWriteInput.entity(entity, in: store)
            return (definition.name, try await store.deleteLocally(definition.name, key: try LocalWriteInput.key(key, of: definition, in: store)))
        }
        if let mutation {
            print("queued \(mutation)")
        } else {
            print("deleted \(name) \(key) locally: its create was never sent, so it left the outbox and nothing is queued")
        }
    }
}

struct OutboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: "List the local writes waiting for the API, retry a rejected one or discard one.",
        discussion: """
            list (the default) prints a table of the outbox in commit order: each mutation's id, state (pending, or \
            rejected by the API), kind, entity, key, attempts, and its last error or the API's rejection (its status, \
            message and field errors, as HTTP 422: name can't be blank). retry ID makes a rejected mutation pending again (with JSON: its changes corrected, \
            an object in the API's shape), sent with the next push under a new Idempotency-Key. discard ID removes a \
            mutation without sending it.
            Examples: replica outbox --db people.sqlite
                      replica outbox --db people.sqlite retry 3 '{"numberOfKids": 2}'
            """
    )

    @OptionGroup var store: OutboxStoreOptions

    @Argument(help: "list, retry ID [JSON] or discard ID.")
    var action: [String] = []

    func validate() throws {
        switch action.first ?? "list" {
        case "list":
            if action.count > 1 { throw ValidationError("list takes no arguments, not '\(action.dropFirst().joined(separator: " "))'") }
        case "retry":
            guard action.count == 2 || action.count == 3 else { throw ValidationError("retry takes a mutation id and, optionally, JSON") }
            _ = try Self.id(action[1])
        case "discard":
            guard action.count == 2 else { throw ValidationError("discard takes one mutation id") }
            _ = try Self.id(action[1])
        case let other:
            throw ValidationError("unknown action '\(other)': give list, retry ID [JSON] or discard ID")
        }
    }

    static func id(_ text: String) throws -> Int64 {
        guard let id = Int64(text.hasPrefix("#") ? String(text.dropFirst()) : text), id > 0 else {
            throw ValidationError("a mutation id is a whole number from 1 (as replica outbox lists it), not '\(text)'")
        }
        return id
    }

    func run() async throws {
        switch action.first ?? "list" {
        case "retry":
            let id = try Self.id(action[1])
            let mutation = try await store.using { store in
                var changes: [String: AttributeValue]?
                if action.count == 3 {
                    guard let mutation = try await store.outbox().first(where: { $0.id == id }) else {
                        throw CLIError("the outbox has no mutation #\(id)")
                    }
                    changes = try LocalWriteInput.values(action[2], of: try LocalWriteInput.entity(mutation.entity, in: store), in: store)
                }
                try await store.retryMutation(id, changes: changes)
                return try await store.outbox().first { $0.id == id }
            }
            print(mutation.map { "pending again: \($0)" } ?? "pending again: #\(id)")
        case "discard":
            let id = try Self.id(action[1])
            let discarded = try await store.using { store in
                let mutation = try await store.outbox().first { $0.id == id }
                try await store.discardMutation(id)
                return mutation
            }
            print(discarded.map { "discarded \($0)" } ?? "discarded #\(id)")
        default:
            let mutations = try await store.using { try await $0.outbox() }
            print(Self.table(mutations).render(maxWidth: Terminal.width(of: STDOUT_FILENO)), terminator: "")
            print("(\(mutations.count) \(mutations.count == 1 ? "mutation" : "mutations"))")
        }
    }

    /// The outbox as a table: one row per mutation, in commit order.
    static func table(_ mutations: [Mutation]) -> TextTable {
        TextTable(columns: ["id", "state", "kind", "entity", "key", "attempts", "error"], rows: mutations.map { mutation in
            var error = mutation.lastError ?? ""
            if let rejection = mutation.rejection { error = LocalWriteInput.firstLine(rejection.error.description) }
            return ["\(mutation.id)", mutation.state.rawValue, mutation.kind.rawValue, mutation.entity,
                    TextTable.cell(mutation.key), "\(mutation.attempts)", TextTable.cell(.string(error))]
        })
    }
}
