import ArgumentParser
import Foundation
import Logging
import Replica
import ReplicaHTTP
import ServiceLifecycle

struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Send the outbox's local writes (replica save, replica delete) to the API.",
        discussion: """
            Each row's pending mutations are sent in commit order (--concurrency rows at a time), each with its \
            Idempotency-Key, so a write sent twice (a retry, a push killed and run again) is applied once by an API \
            that honours it. A 2xx confirms (the row takes the API's answer and key), a 4xx but 408 and 429 rejects \
            (the change is taken back; see replica outbox), anything else leaves the mutation pending. Prints what \
            happened and one Error: line per rejected or still pending mutation. Exit status: 0 when everything was \
            confirmed (or nothing waited), 3 when the API rejected a mutation, 2 when some are still pending (the API \
            could not be reached or failed), 1 for a usage or store error. With --every it pushes every SECONDS \
            (printing only when something was sent) until SIGTERM or Ctrl-C, and exits 0.
            Example: replica push --db people.sqlite --base-url http://127.0.0.1:8888
            """
    )

    @OptionGroup var store: OutboxStoreOptions

    @OptionGroup var http: PushHTTPOptions

    @Option(help: "Push every SECONDS until interrupted.")
    var every: Double?

    @Option(help: "How many rows' mutations are sent at once.")
    var concurrency: Int = 4

    func validate() throws {
        if let every { try OptionChecks.seconds(every, option: "--every") }
        if concurrency < 1 || concurrency > 64 { throw ValidationError("--concurrency takes a number from 1 up to 64, not \(concurrency)") }
    }

    /// The exit statuses besides 0 and 1.
    static let pendingStatus: Int32 = 2
    static let rejectedStatus: Int32 = 3

    func run() async throws {
        let status = try await store.using { store in
            let transport = HTTPTransport()
            let client = ReplicaClient(store: store, configuration: try http.configuration(transport: transport))
            let status: Int32
            do {
                if let every {
                    try await PushLoop.run(client, every: every, concurrency: concurrency)
                    status = 0
                } else {
                    let result = try await client.push(concurrency: concurrency)
                    PushReport.print(result)
                    status = PushReport.status(result)
                }
            } catch {
                try? await transport.shutdown()
                throw error
            }
            try? await transport.shutdown()
            return status
        }
        if status != 0 { throw ExitCode(status) }
    }
}

/// The HTTP options of `replica push`, as `replica sync` has them.
struct PushHTTPOptions: ParsableArguments {
    @Option(name: .customLong("base-url"), help: "The API's base URL.")
    var baseURL: String

    @Option(name: .customLong("header"), help: "A header sent with every request to the base URL, 'Name: value'; it overrides the schema's.")
    var headers: [String] = []

    @Option(name: .customLong("allow-host"),
            help: "A host a redirect may lead to (host, host:port, an origin, *.domain or *); it gets no --header. Repeatable.")
    var allowedHosts: [String] = []

    @Option(help: "Seconds before a request times out, to its response head.")
    var timeout: Double = 30

    @Option(help: "Retries of a request that could not connect or was answered 429 or 503 (after its Retry-After, or a backoff); 0 tries once.")
    var retries: Int = 3

    @Option(name: .customLong("max-wait"), help: "The longest wait in seconds for a Retry-After.")
    var maxWait: Double = 120

    func validate() throws {
        try OptionChecks.seconds(timeout, option: "--timeout")
        try OptionChecks.seconds(maxWait, option: "--max-wait")
        if retries < 0 || retries > 100 { throw ValidationError("--retries takes a number from 0 up to 100, not \(retries)") }
        for host in allowedHosts where host.trimmingCharacters(in: .whitespaces).isEmpty || host.contains("/") && !host.contains("://") {
            throw ValidationError("--allow-host takes a host, host:port, an origin (https://host:port), *.domain or *, not '\(host)'")
        }
        for header in headers { _ = try OptionChecks.header(header) }
        guard let url = URL(string: baseURL), url.scheme == "http" || url.scheme == "https" else {
            throw ValidationError("--base-url must be an http or https URL")
        }
    }

    /// The client's configuration: the base URL, the headers (over the schema's, to the base
    /// URL's origin only), the allowed hosts, the timeout and a ``RetryInterceptor``.
    func configuration(transport: any Transport) throws -> ClientConfiguration {
        guard let base = URL(string: baseURL), let origin = Origin(base) else { throw CLIError("invalid --base-url \(baseURL)") }
        var configuration = ClientConfiguration(transport: transport, baseURLs: [.production: base])
        configuration.timeout = .checkedSeconds(timeout)
        configuration.allowedHosts = allowedHosts
        var interceptors: [any Interceptor] = []
        if !headers.isEmpty {
            var fields = HeaderFields()
            for header in headers {
                let (name, value) = try OptionChecks.header(header)
                fields[name] = value
            }
            interceptors.append(OriginHeaders(headers: fields, origin: origin))
        }
        if retries > 0 {
            // A mutation carries its Idempotency-Key: a failed connection is safe to try again.
            interceptors.append(RetryInterceptor(maxAttempts: retries + 1, maxRetryAfter: .checkedSeconds(maxWait)))
        }
        configuration.interceptors = interceptors
        return configuration
    }
}

/// Sets `headers` on every request to `origin`, over the schema's: `--header` for a push.
struct OriginHeaders: Interceptor {
    let headers: HeaderFields
    let origin: Origin

    func intercept(_ request: ClientRequest, next: Next) async throws -> ClientResponse {
        guard Origin(request.url) == origin else { return try await next(request) }
        var request = request
        for (name, value) in headers { request.headers[name] = value }
        return try await next(request)
    }
}

/// What a push prints, and its exit status.
enum PushReport {
    /// `1 confirmed, 0 rejected, 0 still pending` on standard output, then an `Error:` line on
    /// standard error per rejected mutation (the API's error: status, message, field errors) and per still
    /// pending one (its last error, or the earlier mutation of its row it waits for).
    static func print(_ result: PushResult, prefix: String = "") {
        Output.write(prefix + result.description + "\n", to: .standardOutput)
        for line in errorLines(result) { printError(line) }
    }

    static func errorLines(_ result: PushResult) -> [String] {
        var lines: [String] = []
        for mutation in result.rejected {
            // `#1 update Person 7 (id, name) rejected: HTTP 404 no people with id 7`: the API's error in
            // place of the bare status the mutation's description ends with.
            var named = mutation
            named.rejection = nil
            named.state = .pending
            lines.append("\(named) rejected: " + LocalWriteInput.firstLine(mutation.rejection?.error.description ?? ""))
        }
        var firstOfRow: [String: Int64] = [:]
        for mutation in result.pending {
            let row = mutation.entity + "\u{0}" + mutation.key.description
            if let first = firstOfRow[row] {
                lines.append("\(mutation) still pending: waits for #\(first)")
            } else {
                firstOfRow[row] = mutation.id
                lines.append("\(mutation) still pending: " + LocalWriteInput.firstLine(mutation.lastError ?? "not sent"))
            }
        }
        return lines
    }

    /// 0, ``PushCommand/rejectedStatus`` when a mutation was rejected, else
    /// ``PushCommand/pendingStatus`` when one is still pending.
    static func status(_ result: PushResult) -> Int32 {
        if !result.rejected.isEmpty { return PushCommand.rejectedStatus }
        if !result.pending.isEmpty { return PushCommand.pendingStatus }
        return 0
    }
}

/// Pushes the outbox every few seconds, under a `ServiceGroup`, until SIGTERM or SIGINT: for
/// `replica push --every` and beside the syncs of `replica sync --every`.
struct PushLoop: Service {
    let client: ReplicaClient
    let every: Double
    let concurrency: Int
    /// Put before each report line (`push: ` beside syncs).
    var prefix = ""
    /// Whether the first push waits `every` seconds too (the caller pushed just before).
    var waitsFirst = false

    func run() async throws {
        if waitsFirst, !(await sleep()) { return }
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                if try await !client.store.outbox(.pending).isEmpty {
                    PushReport.print(try await client.push(concurrency: concurrency), prefix: prefix)
                }
            } catch {
                printError("push: \(error)")
            }
            guard await sleep() else { return }
        }
    }

    /// Waits `every` seconds; `false` when the group shuts down meanwhile.
    private func sleep() async -> Bool {
        do {
            try await cancelWhenGracefulShutdown { try await Task.sleep(for: .checkedSeconds(every)) }
            return true
        } catch {
            return false
        }
    }

    /// Runs a loop alone until SIGTERM or SIGINT.
    static func run(_ client: ReplicaClient, every: Double, concurrency: Int) async throws {
        var logger = Logger(label: "replica.push")
        logger.logLevel = .error
        var configuration = ServiceGroupConfiguration(services: [PushLoop(client: client, every: every, concurrency: concurrency)],
                                                      gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(3)
        try await ServiceGroup(configuration: configuration).run()
    }
}
