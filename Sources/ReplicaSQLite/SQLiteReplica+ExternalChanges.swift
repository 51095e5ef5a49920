import Foundation
import GRDB
import ReplicaCore

extension SQLiteReplica {
    /// Publishes a change set that marks `entities` (all when `nil`) as changed in unknown ways,
    /// so that observers and live result sets re-read them.
    ///
    /// ```swift
    /// try store.database.write { db in try db.execute(sql: "DELETE FROM posts") }
    /// engine.publishUnknownChanges(entities: ["Post"])
    /// ```
    public func publishUnknownChanges(entities: Set<String>? = nil) {
        publishUnknownChanges(entities: entities, rekeyed: [:])
    }

    /// ``publishUnknownChanges(entities:)``, with the rows of each entity known to have only
    /// changed key (live result sets show each as one row changed).
    func publishUnknownChanges(entities: Set<String>? = nil, rekeyed: [String: [KeyChange]]) {
        let names = entities ?? Set(mapping.maps.map(\.entity.name))
        var changes = ChangeSet(sequence: sequence.next())
        for name in names.sorted() {
            var unknown = EntityChanges()
            unknown.isUnknown = true
            unknown.rekeyed = rekeyed[name] ?? []
            changes.entities[name] = unknown
        }
        observers.publish(changes)
    }

    /// Watches the database file for commits by other processes (another `replica import`,
    /// another service) by polling `PRAGMA data_version` on the writer connection, and
    /// publishes an unknown-changes set for every entity when one is seen.
    ///
    /// The writer connection's data version changes only when another connection commits, so
    /// Replica's own writes (already reported exactly) are not reported twice. Rows another
    /// process's push gave the API's key in place of a temporary one are read from its log and
    /// reported as rekeyed, so that live result sets show each as one row changed. The version to
    /// compare with is read before this returns: start the monitor before reading a snapshot, and
    /// any later commit by another process is reported.
    ///
    /// ```swift
    /// let monitor = engine.detectExternalChanges(every: .milliseconds(250))
    /// // ... later
    /// monitor.stop()
    /// ```
    ///
    /// - Parameter interval: How often to poll.
    /// - Returns: The monitor; polling stops when it is stopped or released.
    public func detectExternalChanges(every interval: Duration = .milliseconds(500)) -> ExternalChangeMonitor {
        let queue = DispatchQueue(label: "Replica.external-changes")
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let milliseconds = max(1, Int(interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000))
        let database = store.database
        let last = DataVersion()
        let readVersion = {
            try? database.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA data_version") }
        }
        let schema = self.schema
        let lastRekey = Locked<Int64>(0)
        // The rekeys logged since the last read, by entity.
        let readRekeys = { () -> [String: [KeyChange]] in
            let rows = try? database.writeWithoutTransaction { db -> [Row] in
                guard try db.replicaTableExists(OutboxTable.rekeys) else { return [] }
                return try Row.fetchAll(db, sql: "SELECT seq, entity, from_key, to_key FROM \(OutboxTable.rekeys) WHERE seq > ? ORDER BY seq",
                                        arguments: [lastRekey.withLock { $0 }])
            }
            var rekeyed: [String: [KeyChange]] = [:]
            for row in rows ?? [] {
                guard let seq = row[0] as Int64? else { continue }
                lastRekey.withLock { $0 = max($0, seq) }
                guard let name = row[1] as String?, let entity = schema.entity(named: name), let fromText = row[2] as String?,
                      let toText = row[3] as String?, let from = OutboxTable.key(fromText, of: entity),
                      let to = OutboxTable.key(toText, of: entity) else { continue }
                rekeyed[name, default: []].append(KeyChange(from: from, to: to))
            }
            return rekeyed
        }
        // The baseline is read before this returns: a commit by another process after that (after
        // a snapshot the caller reads next, say) is reported, never taken for the baseline.
        queue.sync {
            if let version = readVersion() { _ = last.update(version) }
            _ = readRekeys()
        }
        timer.schedule(deadline: .now() + .milliseconds(milliseconds), repeating: .milliseconds(milliseconds))
        timer.setEventHandler { [weak self] in
            guard let version = readVersion() else { return }
            if last.update(version) { self?.publishUnknownChanges(rekeyed: readRekeys()) }
        }
        timer.resume()
        return ExternalChangeMonitor(timer: timer)
    }
}

/// The last data version seen (read and written by the monitor's timer, on its serial queue).
private final class DataVersion: Sendable {
    private let value = Locked<Int?>(nil)

    /// Records `version`; `true` when it differs from a previous one.
    func update(_ version: Int) -> Bool {
        value.withLock { value in
            defer { value = version }
            guard let value else { return false }
            return value != version
        }
    }
}
