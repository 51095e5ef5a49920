import Foundation
import Hummingbird
import Logging
import Metrics
import NIOCore
import Prometheus

/// `replica sync --every … --metrics-port P`: the process's metrics in Prometheus' text format
/// (`text/plain; version=0.0.4`) at `GET /metrics` on 127.0.0.1:P, from a swift-prometheus
/// factory bootstrapped as swift-metrics' global one (which the sync's client records into).
///
/// ```swift
/// let endpoint = try await MetricsEndpoint.start(port: 0)
/// print(endpoint.url)          // http://127.0.0.1:41234/metrics
/// await endpoint.stop()
/// ```
struct MetricsEndpoint: Sendable {
    /// Where the metrics are served: `http://127.0.0.1:PORT/metrics`.
    let url: String
    private let task: Task<Void, any Error>

    /// Bootstraps the metrics system (once a process) and starts serving it on `port` (0 picks a
    /// free one).
    ///
    /// - Throws: `CLIError` when the port cannot be listened on.
    static func start(port: Int) async throws -> MetricsEndpoint {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let router = Router()
        router.get("metrics") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        var logger = Logger(label: "replica.metrics")
        logger.logLevel = .critical
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)),
                              onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? port) },
                              logger: logger)
        // No signal handling of its own: stopping the command stops it.
        let task = Task {
            defer { continuation.finish() }
            try await app.runService(gracefulShutdownSignals: [])
        }
        var iterator = ports.makeAsyncIterator()
        guard let bound = await iterator.next() else {
            let reason: String
            do {
                try await task.value
                reason = "the server stopped"
            } catch {
                reason = "\(error)"
            }
            throw CLIError("--metrics-port \(port): cannot serve metrics on 127.0.0.1:\(port): \(reason)")
        }
        return MetricsEndpoint(url: "http://127.0.0.1:\(bound)/metrics", task: task)
    }

    /// Runs `body` while serving metrics on `port` (printing where on standard error), or
    /// just runs it when `port` is `nil`.
    ///
    /// ```swift
    /// try await MetricsEndpoint.serving(port: metricsPort) { try await syncPaths() }
    /// ```
    ///
    /// - Throws: What `body` threw, or `CLIError` when the port cannot be listened on.
    static func serving<T: Sendable>(port: Int?, _ body: () async throws -> T) async throws -> T {
        guard let port else { return try await body() }
        let endpoint = try await start(port: port)
        Output.write("metrics: \(endpoint.url)\n", to: .standardError)
        do {
            let result = try await body()
            await endpoint.stop()
            return result
        } catch {
            await endpoint.stop()
            throw error
        }
    }

    /// Stops serving.
    func stop() async {
        task.cancel()
        _ = try? await task.value
    }
}
