import Foundation

/// The delegate and async-sequence consumers of a live result set.
///
/// Each consumer remembers the snapshot it last received. A consumer that is busy (a delegate
/// whose previous delivery has not finished on its queue, an iterator not waiting in `next()`)
/// receives nothing; when it is ready again it gets one diff from what it saw to the current
/// snapshot, so a burst of commits reaches a slow consumer as one coalesced diff.
extension LiveResultCore {
    /// A delegate, its queue and delivery state.
    struct DelegateConsumer: Sendable {
        var delegate: WeakDelegate
        var queue: DispatchQueue
        var seen: ResultSnapshot
        var seenVersion: UInt64
        var isDelivering = false
        /// Identifies this registration, so a stale acknowledgement is ignored.
        var generation: UInt64
    }

    /// An async iterator's state.
    struct StreamConsumer {
        var seen: ResultSnapshot
        var seenVersion: UInt64
        var waiting: CheckedContinuation<LiveResultUpdate?, Never>?
        var isCancelled = false
    }

    func setDelegate(_ delegate: (any LiveResultSetDelegate)?, queue: DispatchQueue) {
        dispatchPrecondition(condition: .onQueue(self.queue))
        guard let delegate, !closedFlag.isSet else {
            delegateConsumer = nil
            return
        }
        statistics.delegateGenerations += 1
        delegateConsumer = DelegateConsumer(delegate: WeakDelegate(value: delegate), queue: queue, seen: current,
                                            seenVersion: version, generation: statistics.delegateGenerations)
    }

    func feedDelegate() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard var consumer = delegateConsumer, !consumer.isDelivering, consumer.seenVersion != version else { return }
        guard consumer.delegate.value != nil else {
            delegateConsumer = nil
            return
        }
        let diff = self.diff(since: consumer.seenVersion, snapshot: consumer.seen)
        let snapshot = current
        consumer.seen = snapshot
        consumer.seenVersion = version
        guard !diff.isEmpty else {
            delegateConsumer = consumer
            return
        }
        consumer.isDelivering = true
        delegateConsumer = consumer
        let generation = consumer.generation
        let box = consumer.delegate
        let flag = closedFlag
        let coreQueue = queue
        consumer.queue.async { [weak self, weak owner] in
            if let owner, let delegate = box.value, !flag.isSet {
                Self.deliver(diff, snapshot: snapshot, to: delegate, from: owner, closed: flag)
            }
            guard let core = self else { return }
            coreQueue.async { core.delegateDidFinish(generation) }
        }
    }

    /// Calls the delegate for one diff, in batch order, stopping at once if the set is closed.
    static func deliver(_ diff: ResultDiff, snapshot: ResultSnapshot, to delegate: any LiveResultSetDelegate,
                        from owner: LiveResultSet, closed: Latch) {
        delegate.resultSetWillChange(owner, diff: diff)
        if let reset = diff.resetSnapshot, !closed.isSet { delegate.resultSet(owner, didReset: reset) }
        for change in diff.changes {
            if closed.isSet { return }
            switch change {
            case .deleteSection(let section): delegate.resultSet(owner, didDeleteSection: section)
            case .insertSection(let section): delegate.resultSet(owner, didInsertSection: section)
            case .deleteRow(let row): delegate.resultSet(owner, didDeleteRow: row)
            case .insertRow(let row): delegate.resultSet(owner, didInsertRow: row)
            case .moveRow(let row): delegate.resultSet(owner, didMoveRow: row)
            case .updateRow(let row): delegate.resultSet(owner, didUpdateRow: row)
            }
        }
        if closed.isSet { return }
        delegate.resultSetDidFinishUpdating(owner, snapshot: snapshot, diff: diff)
    }

    func delegateDidFinish(_ generation: UInt64) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard var consumer = delegateConsumer, consumer.generation == generation else { return }
        consumer.isDelivering = false
        delegateConsumer = consumer
        feedDelegate()
    }

    /// Registers an iterator starting at the current snapshot.
    func addStream() -> (id: UInt64, snapshot: ResultSnapshot) {
        dispatchPrecondition(condition: .onQueue(queue))
        let id = nextStreamID
        nextStreamID += 1
        if !closedFlag.isSet {
            streams[id] = StreamConsumer(seen: current, seenVersion: version)
        }
        return (id, current)
    }

    func removeStream(_ id: UInt64) {
        dispatchPrecondition(condition: .onQueue(queue))
        let waiting = streams.removeValue(forKey: id)?.waiting
        waiting?.resume(returning: nil)
    }

    /// An iterator asks for its next update.
    func request(_ id: UInt64, _ continuation: CheckedContinuation<LiveResultUpdate?, Never>) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard var consumer = streams[id], !consumer.isCancelled, !closedFlag.isSet, consumer.waiting == nil else {
            continuation.resume(returning: nil)
            return
        }
        consumer.waiting = continuation
        streams[id] = consumer
        feedStream(id)
    }

    func cancelStream(_ id: UInt64) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard var consumer = streams[id] else { return }
        consumer.isCancelled = true
        let waiting = consumer.waiting
        consumer.waiting = nil
        streams[id] = consumer
        waiting?.resume(returning: nil)
    }

    func feedStream(_ id: UInt64) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard var consumer = streams[id], let waiting = consumer.waiting, consumer.seenVersion != version else { return }
        let diff = self.diff(since: consumer.seenVersion, snapshot: consumer.seen)
        let previous = consumer.seen
        consumer.seen = current
        consumer.seenVersion = version
        guard !diff.isEmpty else {
            streams[id] = consumer
            return
        }
        consumer.waiting = nil
        streams[id] = consumer
        waiting.resume(returning: LiveResultUpdate(previous: previous, snapshot: current, diff: diff))
    }
}

/// A weak reference to a delegate, as NSFetchedResultsController holds its own.
struct WeakDelegate: Sendable {
    weak var value: (any LiveResultSetDelegate)?
}
