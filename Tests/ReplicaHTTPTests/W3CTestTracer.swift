import Foundation
import InMemoryTracing
import Tracing
import W3CTraceContext

/// swift-distributed-tracing's in-memory tracer with W3C trace context propagation, as a real
/// tracer (swift-otel's) propagates: `traceparent` (`00-<trace id>-<span id>-01`, ids of 32 and 16
/// lowercase hex digits) and `tracestate` (`replica=test`) for the span in the injected context.
///
/// ```swift
/// let tracer = W3CTestTracer()
/// configuration.tracer = tracer
/// tracer.finished("replica.call")   // the finished spans of that name
/// ```
struct W3CTestTracer: Tracer {
    let memory: InMemoryTracer

    init() {
        let ids = IDs()
        memory = InMemoryTracer(idGenerator: InMemoryTracer.IDGenerator(
            nextTraceID: { String(format: "%032llx", 0x4bf9_2f35_77b3_4da6 &+ UInt64(ids.next())) },
            nextSpanID: { String(format: "%016llx", 0x00f0_67aa_0ba9_02b7 &+ UInt64(ids.next())) }))
    }

    func startSpan<Instant: TracerInstant>(_ operationName: String, context: @autoclosure () -> ServiceContext,
                                           ofKind kind: SpanKind, at instant: @autoclosure () -> Instant,
                                           function: String, file fileID: String, line: UInt) -> InMemorySpan {
        memory.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        guard let span = context.inMemorySpanContext,
              let trace = try? TraceContext(traceParentHeaderValue: "00-\(span.traceID)-\(span.spanID)-01",
                                            traceStateHeaderValue: "replica=test") else { return }
        injector.inject(trace.traceParentHeaderValue, forKey: "traceparent", into: &carrier)
        if let state = trace.traceStateHeaderValue { injector.inject(state, forKey: "tracestate", into: &carrier) }
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {}

    /// The finished spans named `name`, in the order they ended.
    func finished(_ name: String) -> [FinishedInMemorySpan] {
        memory.finishedSpans.filter { $0.operationName == name }
    }

    /// Increasing numbers for ids. `@unchecked Sendable`: guarded by `lock`.
    final class IDs: @unchecked Sendable {
        private let lock = NSLock()
        private var last = 0
        func next() -> Int { lock.withLock { last += 1; return last } }
    }
}

/// The parts of a `traceparent` header, parsed by swift-w3c-trace-context.
///
/// ```swift
/// let parent = try TraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
/// parent.spanID   // "00f067aa0ba902b7"
/// ```
struct TraceParent: Equatable {
    var traceID: String
    var spanID: String

    init(_ header: String) throws {
        let context = try TraceContext(traceParentHeaderValue: header)
        traceID = context.traceID.description
        spanID = context.spanID.description
    }
}
