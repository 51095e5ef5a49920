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
        var unknown = EntityChanges()
        unknown.isUnknown = true
        let names = entities ?? Set(mapping.maps.map(\.entity.name))
        var changes = ChangeSet(sequence: sequence.next())
        for name in names.sorted() { changes.entities[name] = unknown }
        observers.publish(changes)
    }

    /// Watches the database file for commits by other processes (another `replica import`,
    /// another service) by polling `PRAGMA data_version` on the writer connection, and
    /// publishes an unknown-changes set for every entity when one is seen.
    ///
    /// The writer connection's data version changes only when another connection commits, so
    /// Replica's own writes (already reported exactly) are not reported twice. The version to
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
        // The baseline is read before this returns: a commit by another process after that (after
        // a snapshot the caller reads next, say) is reported, never taken for the baseline.
        queue.sync { if let version = readVersion() { _ = last.update(version) } }
        timer.schedule(deadline: .now() + .milliseconds(milliseconds), repeating: .milliseconds(milliseconds))
        timer.setEventHandler { [weak self] in
            guard let version = readVersion() else { return }
            if last.update(version) { self?.publishUnknownChanges() }
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
