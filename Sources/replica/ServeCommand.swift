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
            (?color=red), _sort/_order, and page as --pagination says (below; by default _page/_limit or \
            limit/offset with Link and X-Total-Count headers). \
            A nested to-one object (POST /issues with "user": {"id": 7, "login": "ann"}) is stored in its own \
            resource, the foreign key (user_id) set, and served back. --data is loaded before the port opens. \
            The first line on standard output is the address; each request logs one line on standard error.

            Pagination styles (--pagination STYLE for every collection, --pagination people=STYLE for one \
            resource, --pagination /v1/customers=STYLE for one of the schema's routes; a request without a size \
            gets --page-size, one asking more than --max-page-size gets that many; every style keeps filters, \
            _sort/_order and ?since=, sends X-Total-Count but gitlab, and answers a bad paging value with a 400 \
            naming it):
              link     ?_page=N&_limit=M or ?limit=M&offset=N: a bare array, Link: <…>; rel="first|prev|next|last" \
            (the default; no paging parameter answers the whole collection)
              cursor   ?limit=M&cursor=C: {"ok": true, "items": [...], "response_metadata": {"next_cursor": "C2"}}, \
            "" on the last page (Slack)
              stripe   ?limit=M&starting_after=ID: {"object": "list", "url": "/v1/customers", "has_more": true, \
            "data": [...]}; an unknown ID is a 400 {"error": {"type": "invalid_request_error", "message": \
            "No such object: 'ID'", "param": "starting_after"}}
              offset   ?offset=N&limit=M: {"items": [...], "total": T, "offset": N, "limit": M}
              jira     ?startAt=N&maxResults=M: {"startAt": N, "maxResults": M, "total": T, "isLast": false, "values": [...]}
              page     ?page=N&per_page=M (from 1): {"items": [...], "page": N, "per_page": M, "total": T, "total_pages": P}
              jsonapi  ?page[number]=N&page[size]=M (from 1): {"data": [{"type": "people", "id": "7", "attributes": \
            {...}}], "links": {"self", "first", "last", "next" (null on the last page)}, "meta": {"total": T}}
              hal      ?page=N&size=M (from 0): {"_embedded": {"people": [...]}, "_links": {"self": {"href": URL}, \
            "next" (absent on the last page), "last"}, "page": {"size", "totalElements", "totalPages", "number"}}
              gitlab   ?pagination=keyset&per_page=M&order_by=id&sort=asc&id_after=ID: a bare array, \
            Link: <…&id_after=LAST>; rel="next" while there are more
            --rate-limit 5/1 allows five requests a second: more get 429 with Retry-After, X-RateLimit-Limit, \
            X-RateLimit-Remaining: 0 and X-RateLimit-Reset (Unix seconds); answers under it carry X-RateLimit-Limit, \
            -Remaining and -Reset.
            Writes: a POST, PUT, PATCH or DELETE with an Idempotency-Key header runs once; a repeat with the same \
            method, path and body gets the first answer again with Idempotent-Replayed: true (for 24 hours), the key \
            with another request 422, a repeat while the first runs 409. Every object has an ETag (GET, and the \
            answers of creates and updates); PUT, PATCH or DELETE with an If-Match naming another tag gets 412 and \
            changes nothing (If-Match: * matches any object). POST /_replica/down takes the API down (503 with \
            Retry-After; ?mode=drop closes connections unanswered, ?retry_after=N), POST /_replica/up brings it \
            back, GET /_replica/status tells; --down starts it down.

            Example: replica serve --schema Schemas/people.json --port 8888 --latency 50-200
            Example: replica serve --schema Schemas/people.json --pagination stripe --page-size 20 --max-page-size 100
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
            help: "The status of validation errors (a field value a resource refuses): 422 or 400 (default 422; 400 with --error-shape stripe).")
    var validationStatus: Int?

    @Flag(name: .customLong("namespaced-errors"),
          help: "Wrap validation errors in the resource's singular name, as ApiModel's APIs do: {\"person\": {\"errors\": {...}}}.")
    var namespacedErrors = false

    @Option(name: .customLong("error-shape"),
            help: "The body of validation errors: rails ({\"errors\": {\"color\": [...]}}), github ({\"message\": \"Validation Failed\", \"errors\": [{\"resource\", \"field\", \"code\", \"message\"}]}), problem-details (RFC 9457, application/problem+json), stripe ({\"error\": {\"type\", \"code\", \"message\", \"param\"}}, the first field only) or json-api ({\"errors\": [{\"status\", \"source\": {\"pointer\"}, \"title\", \"detail\"}]}).")
    var errorShape: String = "rails"

    @Option(name: .customLong("format-extension"),
            help: "A format extension accepted on a path's last segment, as Rails serves ApiModel's routes: with .json, GET /people.json is GET /people.")
    var formatExtension: String?

    @Option(name: .customLong("pagination"),
            help: ArgumentHelp("How collections are paged: STYLE for all, RESOURCE=STYLE or /ROUTE/PATH=STYLE for one; repeatable. Styles: \(MockPagination.allCases.map(\.rawValue).joined(separator: ", ")) (default link).",
                               valueName: "[NAME=]STYLE"))
    var pagination: [String] = []

    @Option(name: .customLong("page-size"), help: "The page size of a paged request that gives none, in every style.")
    var pageSize: Int = 10

    @Option(name: .customLong("max-page-size"),
            help: "The most objects one page holds, in every style: a request asking more gets this many, and the size the answer echoes is the one used.")
    var maxPageSize: Int?

    @Option(name: .customLong("rate-limit"),
            help: ArgumentHelp("At most N requests per SECONDS (e.g. 5/1): more get 429 with Retry-After and X-RateLimit-* headers.",
                               valueName: "N/SECONDS"))
    var rateLimit: String?

    @Flag(name: .customLong("down"),
          help: "Start with the API down: every request gets 503 with Retry-After until POST /_replica/up.")
    var down = false

    /// `--pagination`'s values: the server-wide style, and the styles of named resources or routes.
    func paginationStyles() throws -> (all: MockPagination?, named: [(name: String, style: MockPagination)]) {
        var all: MockPagination?
        var named: [(name: String, style: MockPagination)] = []
        let styles = MockPagination.allCases.map(\.rawValue).joined(separator: ", ")
        for value in pagination {
            let parts = value.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let styleText = String(parts.last ?? "")
            guard let style = MockPagination(rawValue: styleText) else {
                throw ValidationError("--pagination takes STYLE, RESOURCE=STYLE or /PATH=STYLE with a style of \(styles), not '\(value)'")
            }
            if parts.count == 1 {
                if let all, all != style {
                    throw ValidationError("--pagination gives two styles for every collection: \(all) and \(style)")
                }
                all = style
            } else {
                let name = String(parts[0])
                guard !name.isEmpty else {
                    throw ValidationError("--pagination takes STYLE, RESOURCE=STYLE or /PATH=STYLE, not '\(value)'")
                }
                named.append((name: name, style: style))
            }
        }
        return (all, named)
    }

    func validate() throws {
        _ = try paginationStyles()
        try OptionChecks.integer(pageSize, option: "--page-size", in: 1...1_000_000_000)
        if let maxPageSize { try OptionChecks.integer(maxPageSize, option: "--max-page-size", in: 1...1_000_000_000) }
        if let rateLimit, MockRateLimit(rateLimit) == nil {
            throw ValidationError("--rate-limit takes N/SECONDS, a whole number of requests from 1 and seconds above 0 up to 86400 (e.g. 5/1), not '\(rateLimit)'")
        }
        if let formatExtension, formatExtension.isEmpty || formatExtension.contains("/") {
            throw ValidationError("--format-extension takes an extension such as .json, not '\(formatExtension)'")
        }
        guard serializer == "plain" || serializer == "namespaced" else {
            throw ValidationError("--serializer takes plain or namespaced, not '\(serializer)'")
        }
        if let validationStatus, validationStatus != 422 && validationStatus != 400 {
            throw ValidationError("--validation-status takes 422 or 400, not \(validationStatus)")
        }
        guard let shape = Self.shapes[errorShape] else {
            throw ValidationError("--error-shape takes rails, github, problem-details, stripe or json-api, not '\(errorShape)'")
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
    static let shapes: [String: MockValidationErrors.Shape] = ["rails": .rails, "github": .github, "problem-details": .problemDetails,
                                                                "stripe": .stripe, "json-api": .jsonAPI]

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
        var jsonAPI: [String: JSONAPISerializer] = [:]
        if let schema {
            do {
                let loaded = try Schema(contentsOf: URL(fileURLWithPath: schema))
                resources = MockResource.resources(for: loaded)
                routes = MockRoute.routes(for: loaded)
                jsonAPI = JSONAPISerializer.serializers(for: loaded)
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
        let shape = Self.shapes[errorShape] ?? .rails
        options.validationErrors = MockValidationErrors(status: validationStatus ?? (shape == .stripe ? 400 : 422),
                                                        namespaced: namespacedErrors, shape: shape)
        if serializer == "namespaced" { options.defaultSerializer = NamespacedSerializer() }
        // The entities the schema's routes read as JSON:API are answered as JSON:API documents.
        for (name, serializer) in jsonAPI { options.serializers[name] = serializer }
        options.formatExtension = formatExtension
        let styles = try paginationStyles()
        if let all = styles.all { options.pagination = all }
        for (name, style) in styles.named {
            if name.hasPrefix("/") {
                let matching = routes.indices.filter { routes[$0].path == name }
                guard !matching.isEmpty else {
                    let paths = Set(routes.map(\.path)).sorted()
                    throw CLIError("--pagination \(name)=\(style): the schema has no route \(name) (routes: \(paths.isEmpty ? "none" : paths.joined(separator: ", ")))")
                }
                for index in matching { routes[index].pagination = style }
            } else {
                guard let index = resources.firstIndex(where: { $0.name == name }) else {
                    let names = resources.map(\.name)
                    throw CLIError("--pagination \(name)=\(style): no resource \(name) (resources: \(names.isEmpty ? "none" : names.joined(separator: ", ")))")
                }
                resources[index].pagination = style
            }
        }
        options.pageSize = pageSize
        options.maxPageSize = maxPageSize
        options.rateLimit = rateLimit.flatMap { MockRateLimit($0) }
        if down { options.outage = .unavailable() }
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
        if down { printInfo("the API is down (--down): POST /_replica/up brings it up") }
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
