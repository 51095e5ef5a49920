import CoreMetrics
import ReplicaCore
import Tracing

extension ClientConfiguration {
    /// Where the client's metrics go (``ReplicaMetrics`` lists them): swift-metrics' global
    /// factory (`MetricsSystem.factory`, as bootstrapped when a call records) unless you set one.
    ///
    /// Set one to keep a client's metrics apart, as a test does with swift-metrics'
    /// `TestMetrics`, without bootstrapping the process-wide system:
    ///
    /// ```swift
    /// let metrics = TestMetrics()
    /// configuration.metricsFactory = metrics
    /// try await ReplicaClient(engine: engine, configuration: configuration).call("/people")
    /// try metrics.expectCounter(ReplicaMetrics.pages, [("route", "/people")]).totalValue   // 1
    /// ```
    public var metricsFactory: any MetricsFactory {
        get { chosenMetricsFactory ?? MetricsSystem.factory }
        set { chosenMetricsFactory = newValue }
    }

    /// The tracer of the client's spans (`replica.call`, `replica.page`, `replica.parse`,
    /// `replica.merge`, `replica.notify`) and of the trace headers (`traceparent`, `tracestate`
    /// for a W3C tracer) injected into each request sent while a trace is active: the global one
    /// (`InstrumentationSystem.tracer`, as bootstrapped when a call starts) unless you set one.
    ///
    /// A call's span is a child of the span active in the calling task (its `ServiceContext`):
    ///
    /// ```swift
    /// configuration.tracer = tracer
    /// try await tracer.withSpan("refresh") { _ in
    ///     try await client.call("/people")     // replica.call, a child of "refresh"
    /// }
    /// ```
    public var tracer: any Tracer {
        get { chosenTracer ?? InstrumentationSystem.tracer }
        set { chosenTracer = newValue }
    }
}
