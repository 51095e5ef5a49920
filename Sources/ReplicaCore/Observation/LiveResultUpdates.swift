/// One change of a live result: the snapshot before, the snapshot after, and the diff between.
///
/// ```swift
/// for await update in resultSet.updates() {
///     assert(try update.diff.apply(to: update.previous) == update.snapshot)
/// }
/// ```
public struct LiveResultUpdate: Sendable {
    /// What the consumer saw before.
    public let previous: ResultSnapshot
    /// The new state.
    public let snapshot: ResultSnapshot
    /// From ``previous`` to ``snapshot``; never empty.
    public let diff: ResultDiff
}

/// The updates of a live result set, as an async sequence that starts at ``initial``.
///
/// Iterate it once. While the consumer is busy between two `next()` calls, commits accumulate
/// and the next element carries one diff covering all of them. The sequence ends when the result
/// set is closed or released, or when the iterating task is cancelled.
///
/// The sequence value holds ``initial``; its iterator does not. A long-lived consumer of a large
/// result keeps the iterator alone, so that the first snapshot (a million rows' keys) is released
/// once the result moves on.
///
/// ```swift
/// let updates = resultSet.updates()
/// var shown = updates.initial
/// for await update in updates { shown = try update.diff.apply(to: shown) }
/// ```
public struct LiveResultUpdates: AsyncSequence, Sendable {
    public typealias Element = LiveResultUpdate
    public typealias Failure = Never

    let subscription: LiveResultSubscription

    /// The snapshot the sequence starts from: the first element's ``LiveResultUpdate/previous``.
    public let initial: ResultSnapshot

    init(core: LiveResultCore) {
        (subscription, initial) = LiveResultSubscription.register(with: core)
    }

    /// The iterator; make one per sequence (they share its registration). It does not hold
    /// ``initial``, and it can be handed to another task.
    ///
    /// ```swift
    /// var iterator = resultSet.updates().makeAsyncIterator()
    /// let update = await iterator.next()
    /// ```
    ///
    /// - Returns: An iterator awaiting the next update.
    public func makeAsyncIterator() -> Iterator {
        Iterator(subscription: subscription)
    }

    /// Awaits the next update.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        let subscription: LiveResultSubscription

        /// The next update, or `nil` when the sequence ended.
        public mutating func next() async -> LiveResultUpdate? {
            await subscription.next()
        }
    }
}

/// One iterator's registration with a result set's core; unregisters when released. It keeps no
/// snapshot: the core keeps what the consumer saw last.
final class LiveResultSubscription: Sendable {
    let core: LiveResultCore
    let id: UInt64

    private init(core: LiveResultCore, id: UInt64) {
        self.core = core
        self.id = id
    }

    /// Registers a consumer starting at the core's current snapshot.
    static func register(with core: LiveResultCore) -> (LiveResultSubscription, initial: ResultSnapshot) {
        let (id, initial) = core.queue.sync { core.addStream() }
        return (LiveResultSubscription(core: core, id: id), initial)
    }

    func next() async -> LiveResultUpdate? {
        let (core, id) = (self.core, self.id)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                core.queue.async { core.request(id, continuation) }
            }
        } onCancel: {
            core.queue.async { core.cancelStream(id) }
        }
    }

    deinit {
        let (core, id) = (self.core, self.id)
        core.queue.async { core.removeStream(id) }
    }
}
