import Foundation

/// Identifies a registered change observer, for removal.
public struct ObserverToken: Sendable, Hashable {
    let id: UInt64
}

/// The change observers of a ``SQLiteReplica``: each gets every committed change set that touches
/// its entities, in commit order, on its own queue; none ever blocks the writer.
package final class ChangeObservers: Sendable {
    struct Observer: Sendable {
        let entities: Set<String>?
        let queue: DispatchQueue
        let callback: @Sendable (ChangeSet) -> Void
    }

    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var observers: [UInt64: Observer] = [:]
    nonisolated(unsafe) private var nextID: UInt64 = 1

    package init() {}

    /// Registers `callback` for change sets touching `entities` (all when `nil`), on `queue`.
    package func add(entities: Set<String>?, queue: DispatchQueue,
                     _ callback: @escaping @Sendable (ChangeSet) -> Void) -> ObserverToken {
        add(Observer(entities: entities, queue: queue, callback: callback))
    }

    func add(_ observer: Observer) -> ObserverToken {
        lock.lock()
        defer { lock.unlock() }
        let id = nextID
        nextID += 1
        observers[id] = observer
        return ObserverToken(id: id)
    }

    package func remove(_ token: ObserverToken) {
        lock.lock()
        observers[token.id] = nil
        lock.unlock()
    }

    func contains(_ id: UInt64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return observers[id] != nil
    }

    /// Dispatches `changes` to every interested observer. Called on the writer right after
    /// commit, so dispatch order is commit order; each delivery re-checks that its observer is
    /// still registered, so removal takes effect at once, even from inside a callback.
    package func publish(_ changes: ChangeSet) {
        lock.lock()
        let current = observers
        lock.unlock()
        for (id, observer) in current.sorted(by: { $0.key < $1.key }) {
            var delivered = changes
            if let entities = observer.entities {
                delivered.entities = changes.entities.filter { entities.contains($0.key) && !$0.value.isEmpty }
            }
            guard !delivered.isEmpty else { continue }
            observer.queue.async { [self, delivered] in
                guard contains(id) else { return }
                observer.callback(delivered)
            }
        }
    }
}

/// A lock-protected counter of committed transactions.
final class SequenceCounter: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var value: UInt64 = 0

    func next() -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}
