import Foundation
import ReplicaCore
import Tracing

extension ReplicaClient {
    /// Runs one routed call (``executeSession(_:headers:options:uploadProgress:capture:telemetry:)``)
    /// as the `replica.call` span, a child of the span active in the calling task, and records its
    /// metrics (``ReplicaMetrics``): its duration and outcome, its rows and write lock, or its failure.
    func execute(_ prepared: Prepared, headers: HeaderFields, options: SyncOptions,
                 uploadProgress: (@Sendable (Int64, Int64?) -> Void)? = nil, capture: BodyCapture? = nil) async throws -> CallResult {
        let telemetry = CallTelemetry(prepared: prepared, configuration: configuration)
        defer { telemetry.span.end() }
        return try await ServiceContext.$current.withValue(telemetry.span.context) {
            do {
                let result = try await executeSession(prepared, headers: headers, options: options, uploadProgress: uploadProgress,
                                                      capture: capture, telemetry: telemetry)
                telemetry.succeeded(result)
                return result
            } catch {
                telemetry.failed(error)
                throw error
            }
        }
    }

    /// `request` with the active trace's headers (`traceparent` and `tracestate` for a W3C
    /// tracer) injected by the configuration's tracer; unchanged when no trace is active.
    func traced(_ request: ClientRequest) -> ClientRequest {
        guard let context = ServiceContext.current else { return request }
        var carrier = TraceHeaders(headers: request.headers)
        configuration.tracer.inject(context, into: &carrier, using: TraceHeaders.Injector())
        guard !carrier.names.isEmpty else { return request }
        var request = request
        request.headers = carrier.headers
        request.traceHeaderNames = carrier.names
        return request
    }
}

/// A request's headers as a tracer's injection carrier, remembering which names it set.
struct TraceHeaders {
    var headers: HeaderFields
    var names: [String] = []

    /// Sets each value, replacing any of the same name (a trace has one `traceparent`).
    struct Injector: Tracing.Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout TraceHeaders) {
            carrier.headers[key] = value
            if !carrier.names.contains(where: { $0.caseInsensitiveCompare(key) == .orderedSame }) { carrier.names.append(key) }
        }
    }
}

/// One routed call's span and metrics, as ``ReplicaClient/execute(_:headers:options:uploadProgress:capture:)``
/// records them: the `replica.call` span, a `replica.page` child span per page (its exchange
/// and, as a `replica.parse` child, the staging of its body), and the commit as `replica.merge`.
///
/// ```swift
/// let page = telemetry.page(1, request: request)
/// defer { page.end() }
/// let response = try await page.exchange { try await send(request) }
/// ```
struct CallTelemetry: Sendable {
    let tracer: any Tracer
    let metrics: CallMetrics
    let span: any Span
    let started: ContinuousClock.Instant

    init(prepared: ReplicaClient.Prepared, configuration: ClientConfiguration) {
        tracer = configuration.tracer
        metrics = CallMetrics(factory: configuration.metricsFactory, route: prepared.routeName)
        started = .now
        span = tracer.startSpan("replica.call", context: ServiceContext.current ?? .topLevel)
        span.updateAttributes { attributes in
            attributes["http.route"] = prepared.routeName
            attributes["http.request.method"] = prepared.method.rawValue
            attributes["url.path"] = prepared.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? prepared.path
        }
    }

    /// Starts the span of page `number`, requested with `request`; end it when the page is done.
    func page(_ number: Int, request: ClientRequest) -> PageTelemetry {
        let page = tracer.startSpan("replica.page", context: span.context, ofKind: .client)
        page.updateAttributes { attributes in
            attributes["replica.page"] = number
            attributes["http.request.method"] = request.method.rawValue
            attributes["url.path"] = request.url.path
        }
        return PageTelemetry(tracer: tracer, metrics: metrics, span: page)
    }

    /// Runs the commit as the `replica.merge` span (the store publishes its change set as its
    /// `replica.notify` child).
    func merge(_ commit: () async throws -> SyncResult) async throws -> SyncResult {
        let merge = tracer.startSpan("replica.merge", context: span.context)
        defer { merge.end() }
        do {
            let result = try await WriteTrace.$current.withValue(WriteTrace(tracer: tracer, context: merge.context)) {
                try await commit()
            }
            let counts = CallMetrics.rowCounts(result.changes)
            merge.updateAttributes { attributes in
                attributes["replica.rows.inserted"] = counts.inserted
                attributes["replica.rows.updated"] = counts.updated
                attributes["replica.rows.deleted"] = counts.deleted
                if let lock = result.writeLockDuration { attributes["replica.write_lock.seconds"] = lock / .seconds(1) }
            }
            return result
        } catch {
            merge.fail(error)
            throw error
        }
    }

    /// Records the call's attributes and metrics once it returned `result`.
    func succeeded(_ result: CallResult) {
        metrics.succeeded(result, after: started.duration(to: .now))
        let counts = CallMetrics.rowCounts(result.changes)
        span.updateAttributes { attributes in
            attributes["http.response.status_code"] = result.status
            attributes["replica.pages"] = result.pages
            attributes["replica.pages.not_modified"] = result.unchangedPages
            attributes["replica.rows.inserted"] = counts.inserted
            attributes["replica.rows.updated"] = counts.updated
            attributes["replica.rows.deleted"] = counts.deleted
        }
    }

    /// Records the call's error on its span and counts the failure.
    func failed(_ error: any Error) {
        metrics.failed(error, after: started.duration(to: .now))
        span.fail(error)
    }
}

/// One page's span: its HTTP exchange (the request sent under it, so its trace headers name it)
/// and the staging of its body.
struct PageTelemetry: Sendable {
    let tracer: any Tracer
    let metrics: CallMetrics
    let span: any Span

    /// The page's retries (``RetryInterceptor``) are counted for the route that runs the
    /// exchange under way in this task, and noted on its page span.
    @TaskLocal static var current: PageTelemetry?

    /// Sends the page's request under its span; counts the page, records its status (or error).
    func exchange(_ send: () async throws -> ClientResponse) async throws -> ClientResponse {
        do {
            let response = try await ServiceContext.$current.withValue(span.context) {
                try await Self.$current.withValue(self) { try await send() }
            }
            metrics.page(notModified: response.status == 304)
            span.updateAttributes { $0["http.response.status_code"] = response.status }
            return response
        } catch {
            if let status = (error as? ClientError)?.status { span.updateAttributes { $0["http.response.status_code"] = status } }
            metrics.page(notModified: false)
            span.fail(error)
            throw error
        }
    }

    /// Stages the page's body as the `replica.parse` span.
    func parse(_ stage: () async throws -> StagedPage) async throws -> StagedPage {
        let parse = tracer.startSpan("replica.parse", context: span.context)
        defer { parse.end() }
        do {
            let page = try await stage()
            parse.updateAttributes { attributes in
                attributes["replica.objects"] = page.objectCount
                attributes["replica.bytes"] = Int(clamping: page.byteCount)
            }
            return page
        } catch {
            parse.fail(error)
            span.fail(error)
            throw error
        }
    }

    /// Notes a retry (``RetryInterceptor``): counted, and an event on the page span.
    func retrying(attempt: Int, status: Int?) {
        metrics.retried()
        var attributes: SpanAttributes = ["replica.attempt": .int(Int64(attempt))]
        if let status { attributes["http.response.status_code"] = status }
        span.addEvent(SpanEvent(name: "retry", attributes: attributes))
    }

    /// Ends the page's span.
    func end() {
        span.end()
    }
}

extension Span {
    /// Records `error` and marks the span failed.
    func fail(_ error: any Error) {
        recordError(error)
        setStatus(SpanStatus(code: .error, message: String(describing: error)))
    }
}
