import ArgumentParser
import Dispatch
import Foundation
import ReplicaPostgres
import ReplicaServer
import ReplicaServerPostgres

/// `replica serve`: the embedded mock REST server as a command.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a schema's entities as a mock REST API (RESTEasy's routes), until Ctrl-C.",
        discussion: """
            Each entity is a resource at /<table>: GET, POST /people; GET, PUT, PATCH, DELETE /people/:id. A to-one \
            relationship nests the child under its parent: GET, POST /people/:id/cars (POST sets the child's \
            parent key, named by the foreign key's JSON key, e.g. person_id). An entity with a composite key \
            takes one segment a part: GET, PUT, PATCH, DELETE /refs/:owner/:repo/:ref; GET, POST /refs/:owner/:repo \
            lists or creates within the leading parts. The schema's own routes are served too, by method and path: \
            GET /users/:userID/posts lists a user's posts, POST /pet creates, GET /pet/:petId shows, PUT /pet \
            updates the body's key, GET /user/:username finds by a property. Collections take filters \
            (?color=red), _sort/_order, and _page/_limit or limit/offset with Link and X-Total-Count headers. \
            A nested to-one object (POST /issues with "user": {"id": 7, "login": "ann"}) is stored in its own \
            resource, the foreign key (user_id) set, and served back. --data is loaded before the port opens. \
            The first line on standard output is the address; each request logs one line on standard error.
            Example: replica serve --schema Schemas/people.json --port 8888 --latency 50-200
            """
    )

    @Option(help: "The schema file whose entities become resources.")
    var schema: String?

    @Option(help: "A JSON file to load at start, before the port opens: an object keyed by resource names, each an array of objects.")
    var data: String?

    @Option(help: "The port (0 picks a free one).")
    var port: Int = 8888

    @Option(help: "The address to bind.")
    var host: String = "127.0.0.1"

    @Option(help: "memory, sqlite:PATH for a file that survives restarts, or postgres://USER@HOST:PORT/DB[?sslmode=MODE&sslrootcert=FILE] for a database servers share.")
    var store: String = "memory"

    @Option(help: "Latency per response in milliseconds, MIN-MAX or one number.")
    var latency: String?

    @Option(name: .customLong("fail-rate"), help: "The probability (0 to 1) that a request gets a 500.")
    var failRate: Double = 0

    @Option(name: .customLong("max-body"), help: "The largest request body in bytes (larger ones get 413).")
    var maxBody: Int = 1 << 20

    @Option(name: .customLong("header-timeout"),
            help: "Seconds a client may take to send a request's head once it started (then 408 and close).")
    var headerTimeout: Double = 10

    @Option(name: .customLong("idle-timeout"),
            help: "Seconds a connection may stay open with no request in progress before it is closed.")
    var idleTimeout: Double = 60

    @Option(name: .customLong("body-timeout"),
            help: "Seconds a request's body may take to arrive once its head is in, however steadily it trickles (then 408 and close).")
    var bodyTimeout: Double = 60

    @Option(help: "The serializer of every resource: plain (objects as stored, collections as arrays) or namespaced ({\"person\": {...}}, {\"people\": [...]}).")
    var serializer: String = "plain"

    @Option(name: .customLong("validation-status"),
            help: "The status of validation errors (a field value a resource refuses): 422 or 400.")
    var validationStatus: Int = 422

    @Flag(name: .customLong("namespaced-errors"),
          help: "Wrap validation errors in the resource's singular name, as ApiModel's APIs do: {\"person\": {\"errors\": {...}}}.")
    var namespacedErrors = false

    @Option(name: .customLong("error-shape"),
            help: "The body of validation errors: rails ({\"errors\": {\"color\": [...]}}), github ({\"message\": \"Validation Failed\", \"errors\": [{\"resource\", \"field\", \"code\", \"message\"}]}) or problem-details (RFC 9457, application/problem+json).")
    var errorShape: String = "rails"

    @Option(name: .customLong("format-extension"),
            help: "A format extension accepted on a path's last segment, as Rails serves ApiModel's routes: with .json, GET /people.json is GET /people.")
    var formatExtension: String?

    func validate() throws {
        if let formatExtension, formatExtension.isEmpty || formatExtension.contains("/") {
            throw ValidationError("--format-extension takes an extension such as .json, not '\(formatExtension)'")
        }
        guard serializer == "plain" || serializer == "namespaced" else {
            throw ValidationError("--serializer takes plain or namespaced, not '\(serializer)'")
        }
        guard validationStatus == 422 || validationStatus == 400 else {
            throw ValidationError("--validation-status takes 422 or 400, not \(validationStatus)")
        }
        guard let shape = Self.shapes[errorShape] else {
            throw ValidationError("--error-shape takes rails, github or problem-details, not '\(errorShape)'")
        }
        if namespacedErrors && shape != .rails {
            throw ValidationError("--namespaced-errors wraps the rails shape only, not --error-shape \(errorShape)")
        }
        try OptionChecks.integer(port, option: "--port", in: 0...65535)
        guard (0...1).contains(failRate) else { throw ValidationError("--fail-rate takes a probability from 0 to 1, not \(failRate)") }
        try OptionChecks.integer(maxBody, option: "--max-body", in: 1...(1 << 30), unit: "of bytes")
        try OptionChecks.seconds(headerTimeout, option: "--header-timeout")
        try OptionChecks.seconds(idleTimeout, option: "--idle-timeout")
        try OptionChecks.seconds(bodyTimeout, option: "--body-timeout")
        guard store == "memory" || (store.hasPrefix("sqlite:") && store.count > 7) || PostgresURL.isPostgres(store) else {
            throw ValidationError("--store takes memory, sqlite:PATH or postgres://USER@HOST:PORT/DB, not '\(store)'")
        }
        _ = try latencyRange()
    }

    /// `--error-shape`'s values.
    static let shapes: [String: MockValidationErrors.Shape] = ["rails": .rails, "github": .github, "problem-details": .problemDetails]

    func latencyRange() throws -> ClosedRange<Duration>? {
        guard let latency else { return nil }
        let parts = latency.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard (1...2).contains(parts.count), let low = parts[0], let high = parts.last ?? nil, low >= 0, high >= low,
              high <= 60_000 else {
            throw ValidationError("--latency takes MIN-MAX in milliseconds from 0 to 60000 (e.g. 50-200), not '\(latency)'")
        }
        return .milliseconds(low) ... .milliseconds(high)
    }

    func run() async throws {
        var resources: [MockResource] = []
        var routes: [MockRoute] = []
        if let schema {
            do {
                let loaded = try Schema(contentsOf: URL(fileURLWithPath: schema))
                resources = MockResource.resources(for: loaded)
                routes = MockRoute.routes(for: loaded)
            } catch {
                throw CLIError("\(error)")
            }
        }
        var options = MockServerOptions(host: host, port: port, maxBodySize: maxBody,
                                        headerReadTimeout: .seconds(headerTimeout), idleTimeout: .seconds(idleTimeout))
        options.bodyTimeout = .seconds(bodyTimeout)
        if store.hasPrefix("sqlite:") {
            do { options.store = try SQLiteMockStore(path: String(store.dropFirst(7))) } catch { throw CLIError("\(error)") }
        } else if PostgresURL.isPostgres(store) {
            do { options.store = try PostgresMockStore(url: store) } catch { throw CLIError("\(error)") }
        }
        options.validationErrors = MockValidationErrors(status: validationStatus, namespaced: namespacedErrors,
                                                        shape: Self.shapes[errorShape] ?? .rails)
        if serializer == "namespaced" { options.defaultSerializer = NamespacedSerializer() }
        options.formatExtension = formatExtension
        options.conditions.latency = try latencyRange()
        if failRate > 0 { options.conditions.faults = [MockFault(.status(500), probability: failRate)] }
        options.requestLog = { entry in
            Output.write(entry.description + "\n", to: .standardError)
        }
        // Loaded before the port opens: a client connecting at once never sees an empty collection.
        if let data { options.seeds = [.file(data)] }
        let server: MockServer
        do {
            server = try await MockServer.start(resources: resources, routes: routes, options: options)
        } catch {
            throw CLIError("\(error)")
        }
        if let data {
            let result = server.seedResult
            printInfo("loaded \(result.loaded) objects, rejected \(result.rejected) from \(data)")
            for rejection in result.rejections.prefix(5) { printWarning(rejection) }
        }
        Output.write("Listening on \(server.baseURL)\n", to: .standardOutput)
        let names = server.resources.map { "/" + $0.name }.joined(separator: ", ")
        printInfo("resources: \(names.isEmpty ? "none (give --schema)" : names); Ctrl-C stops")
        if !routes.isEmpty {
            printInfo("routes: " + routes.map { "\($0.method) \($0.path)" }.joined(separator: ", "))
        }
        let signals = Self.stopOnSignals(server)
        await server.waitUntilStopped()
        for source in signals { source.cancel() }
        printInfo("stopped")
    }

    /// SIGINT and SIGTERM stop the server gracefully.
    static func stopOnSignals(_ server: MockServer) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { Task { await server.stop() } }
            source.resume()
            return source
        }
    }
}

/// One informational line on standard error.
private func printInfo(_ message: String) {
    Output.write(message + "\n", to: .standardError)
}
