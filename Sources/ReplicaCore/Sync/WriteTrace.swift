import Tracing

/// The span a store's write transaction runs under, so that the store can make the publication
/// of its change set a `replica.notify` child span: the client sets it around a sync session's
/// commit (its `replica.merge` span), and each store reads it where it publishes.
///
/// A task-local value, because the write reaches the store through the one write driver and
/// SQLite publishes from its writer's queue, where the task's own locals are out of reach: the
/// store reads ``current`` in the task and carries it there.
///
/// ```swift
/// try await WriteTrace.$current.withValue(WriteTrace(tracer: tracer, context: merge.context)) {
///     try await session.commit(complete: true, records: records)
/// }
/// ```
package struct WriteTrace: Sendable {
    /// The tracer of the client whose commit this is.
    package let tracer: any Tracer
    /// The context of the span the commit runs under (`replica.merge`).
    package let context: ServiceContext

    /// The trace of the write under way in this task, if a traced client started it.
    @TaskLocal package static var current: WriteTrace?

    package init(tracer: any Tracer, context: ServiceContext) {
        self.tracer = tracer
        self.context = context
    }

    /// Runs `publish` (which returns how many observers it dispatched to) as the `replica.notify`
    /// span, with the change set's counts as attributes.
    ///
    /// - Returns: What `publish` returned.
    func notifying(_ changes: ChangeSet, _ publish: () -> Int) -> Int {
        let span = tracer.startSpan("replica.notify", context: context)
        defer { span.end() }
        let observers = publish()
        span.updateAttributes { attributes in
            attributes["replica.sequence"] = Int(clamping: changes.sequence)
            attributes["replica.entities"] = changes.changedEntities.sorted()
            attributes["replica.observers"] = observers
        }
        return observers
    }
}
