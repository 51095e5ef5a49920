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

    /// The registered observers by id, and the next id.
    private let registry = Locked((observers: [UInt64: Observer](), nextID: UInt64(1)))

    package init() {}

    /// Registers `callback` for change sets touching `entities` (all when `nil`), on `queue`.
    package func add(entities: Set<String>?, queue: DispatchQueue,
                     _ callback: @escaping @Sendable (ChangeSet) -> Void) -> ObserverToken {
        add(Observer(entities: entities, queue: queue, callback: callback))
    }

    func add(_ observer: Observer) -> ObserverToken {
        registry.withLock { registry in
            let id = registry.nextID
            registry.nextID += 1
            registry.observers[id] = observer
            return ObserverToken(id: id)
        }
    }

    package func remove(_ token: ObserverToken) {
        registry.withLock { $0.observers[token.id] = nil }
    }

    func contains(_ id: UInt64) -> Bool {
        registry.withLock { $0.observers[id] != nil }
    }

    /// Dispatches `changes` to every interested observer. Called on the writer right after
    /// commit, so dispatch order is commit order; each delivery re-checks that its observer is
    /// still registered, so removal takes effect at once, even from inside a callback.
    ///
    /// - Parameter trace: The span of the write, when a client's commit runs under one: the
    ///   publication is then its `replica.notify` child span.
    /// - Returns: How many observers the change set was dispatched to.
    @discardableResult
    package func publish(_ changes: ChangeSet, trace: WriteTrace? = nil) -> Int {
        guard let trace else { return dispatch(changes) }
        return trace.notifying(changes) { dispatch(changes) }
    }

    private func dispatch(_ changes: ChangeSet) -> Int {
        var changes = changes
        if changes.committedAt == nil { changes.committedAt = .now }
        let current = registry.withLock { $0.observers }
        var dispatched = 0
        for (id, observer) in current.sorted(by: { $0.key < $1.key }) {
            var delivered = changes
            if let entities = observer.entities {
                delivered.entities = changes.entities.filter { entities.contains($0.key) && !$0.value.isEmpty }
            }
            guard !delivered.isEmpty else { continue }
            dispatched += 1
            observer.queue.async { [self, delivered] in
                guard contains(id) else { return }
                observer.callback(delivered)
            }
        }
        return dispatched
    }
}

/// A lock-protected counter of committed transactions.
package final class SequenceCounter: Sendable {
    private let value = Locked<UInt64>(0)

    package init() {}

    package func next() -> UInt64 {
        value.withLock { value in
            value += 1
            return value
        }
    }
}
