import Foundation
import Logging
import PostgresNIO
import ReplicaCore

/// Listens on `replica_changes` for other processes' commits and hands their change sets to a
/// replica's observers. Started by the first observer; one connection of its own.
///
/// When the listening connection breaks, notifications sent meanwhile are lost: on
/// reconnecting it publishes a reset of every entity, so live results re-read them.
actor ChangeListener {
    let connections: PostgresConnections
    let url: PostgresURL
    let logger: Logger
    private var task: Task<Void, Never>?
    private var listening: [CheckedContinuation<Void, Never>] = []
    private var isListening = false

    init(connections: PostgresConnections, url: PostgresURL, logger: Logger) {
        self.connections = connections
        self.url = url
        self.logger = logger
    }

    /// Starts listening (once) and returns when the `LISTEN` is in place: a commit after this
    /// call returns is delivered.
    func start(origin: String, entities: [String], deliver: @escaping @Sendable (ChangeSet) -> Void) async {
        if task == nil {
            task = Task { [weak self] in await self?.loop(origin: origin, entities: entities, deliver: deliver) }
        }
        if isListening { return }
        await withCheckedContinuation { listening.append($0) }
    }

    func stop() {
        task?.cancel()
        task = nil
        markListening()
    }

    private func markListening() {
        isListening = true
        let waiting = listening
        listening = []
        for waiter in waiting { waiter.resume() }
    }

    private func loop(origin: String, entities: [String], deliver: @escaping @Sendable (ChangeSet) -> Void) async {
        var reconnecting = false
        while !Task.isCancelled {
            do {
                let connection = try await connections.connect()
                defer { Task { try? await connection.close() } }
                try await connection.listen(on: ChangeAnnouncement.channel) { notifications in
                    if reconnecting {
                        // Commits made while no connection listened are unknown: every entity is re-read.
                        deliver(Self.reset(entities, id: 0))
                    }
                    self.markListening()
                    for try await notification in notifications {
                        guard let received = ChangeAnnouncement.parse(notification.payload), received.origin != origin
                        else { continue }
                        if let body = received.changes {
                            deliver(ChangeAnnouncement.decode(body, id: received.id))
                        } else {
                            deliver(try await self.storedChanges(id: received.id, entities: entities))
                        }
                    }
                }
            } catch {
                if Task.isCancelled { break }
                logger.warning("replica change listener: \(PostgresStoreError.from(error, url: url)); reconnecting")
            }
            reconnecting = true
            markListening()
            try? await Task.sleep(for: .milliseconds(250))
        }
    }

    /// A change set too large for its payload, read from the changes table (a reset of every
    /// entity when it was already deleted).
    private func storedChanges(id: Int64, entities: [String]) async throws -> ChangeSet {
        let query = PostgresSQL.query("SELECT body FROM \(PostgresMigration.changesTable) WHERE id = ?", [.integer(id)])
        let logger = self.logger
        let body: String? = try await connections.withConnection { connection in
            var body: String?
            for try await text in try await connection.query(query, logger: logger).decode(String.self) { body = text }
            return body
        }
        if let body, let json = try? JSONValue(parsing: body) { return ChangeAnnouncement.decode(json, id: id) }
        return Self.reset(entities, id: id)
    }

    /// A change set saying that every row of `entities` may have changed.
    static func reset(_ entities: [String], id: Int64) -> ChangeSet {
        var reset: [String: EntityChanges] = [:]
        for name in entities {
            var change = EntityChanges()
            change.isUnknown = true
            reset[name] = change
        }
        return ChangeSet(sequence: UInt64(max(0, id)), entities: reset)
    }
}
