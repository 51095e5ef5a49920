import Foundation
import NIOConcurrencyHelpers
import ReplicaServer
import ReplicaTestSupport
import Testing

/// Runs the built `replica serve`, as swift-argument-parser's examples are tested.
final class ServeProcess: Sendable {
    static let executable: URL = {
        var candidates: [URL] = []
        if let main = Bundle.main.executableURL { candidates.append(main.deletingLastPathComponent()) }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent())
        }
        let directory = candidates.first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("replica").path) }
        return (directory ?? packageRoot.appendingPathComponent(".build/debug")).appendingPathComponent("replica")
    }()

    let process: Process
    private let stdout = NIOLockedValueBox(Data())
    private let stderr = NIOLockedValueBox(Data())
    private let done = DispatchGroup()
    /// Per pipe (0 stdout, 1 stderr): 1 once its reader thread runs, 2 once it saw the end.
    private let readers = NIOLockedValueBox([0, 0])
    private let stdoutDescriptor: Int32

    init(_ arguments: [String]) throws {
        process = Process()
        process.executableURL = Self.executable
        process.arguments = ["serve"] + arguments
        process.currentDirectoryURL = packageRoot
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        stdoutDescriptor = out.fileHandleForReading.fileDescriptor
        try process.run()
        // A thread of its own for each pipe: blocking reads on Dispatch's shared pool can wait
        // for a free worker while the whole test run is busy (seen once: stderr read, stdout never).
        for (index, (pipe, box)) in [(out, stdout), (err, stderr)].enumerated() {
            done.enter()
            let done = self.done
            let readers = self.readers
            Thread {
                readers.withLockedValue { $0[index] = 1 }
                while true {
                    let chunk = pipe.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    box.withLockedValue { $0.append(chunk) }
                }
                readers.withLockedValue { $0[index] = 2 }
                done.leave()
            }.start()
        }
    }

    /// What a missing line leaves to go on: the bytes and reader state of each pipe, and (on Linux)
    /// where the child's standard output points next to the pipe this process reads.
    private var diagnosis: String {
        let state = readers.withLockedValue { $0 }.map { ["not started", "reading", "at end"][$0] }
        let counts = (stdout.withLockedValue { $0.count }, stderr.withLockedValue { $0.count })
        let childOut = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(process.processIdentifier)/fd/1")
        let ourEnd = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(stdoutDescriptor)")
        return "stdout \(counts.0) bytes, reader \(state[0]); stderr \(counts.1) bytes, reader \(state[1]); "
            + "running \(process.isRunning); child fd 1 → \(childOut ?? "?"), read end fd \(stdoutDescriptor) → \(ourEnd ?? "?")"
    }

    var standardError: String { stderr.withLockedValue { String(decoding: $0, as: UTF8.self) } }
    var standardOutput: String { stdout.withLockedValue { String(decoding: $0, as: UTF8.self) } }

    /// The first line on standard output, polled until it arrives (the process prints it once listening).
    func firstLine(timeout: Duration = .seconds(30)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            // Looked at once more after each sleep, the last included: a sleep of a starved test
            // process can end past the deadline with the line there (seen once: "no address line"
            // with the line's 36 bytes read).
            let text = stdout.withLockedValue { String(decoding: $0, as: UTF8.self) }
            if let newline = text.firstIndex(of: "\n") { return String(text[..<newline]) }
            if !process.isRunning || ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw MockServerError(code: .invalidState, message: "no address line (\(diagnosis)); stderr: \(standardError)")
    }

    /// Sends a signal and waits for the process to exit; returns its status.
    func stop(_ signal: Int32 = SIGINT) async -> Int32 {
        if process.isRunning { kill(process.processIdentifier, signal) }
        return await finish()
    }

    /// Waits for the process to exit and its output to be read; returns its status.
    func finish() async -> Int32 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.process.waitUntilExit()
                self.done.wait()
                continuation.resume()
            }
        }
        return process.terminationStatus
    }
}

@Suite("MockServer replica serve", .serialized)
struct MockServerCLITests {
    @Test("replica serve --schema Schemas/people.json: the curl session, one log line per request, SIGINT stops it")
    func curlSession() async throws {
        let server = try ServeProcess(["--schema", "Schemas/people.json", "--port", "0"])
        let line = try await server.firstLine()
        #expect(line.hasPrefix("Listening on http://127.0.0.1:"))
        let base = String(line.dropFirst("Listening on ".count))
        let client = Client(base: base)
        #expect(try await client.get("/people").json == .array([]))
        let john = try await client.post("/people", #"{"name":"john","numberOfKids":1}"#)
        #expect(john.status == 201)
        #expect(john.json == .parse(#"{"numberOfKids":1,"id":1,"kilometersWalked":null,"name":"john","avatar":null}"#))
        #expect(try await client.put("/people/1", #"{"name":"jeff"}"#).json?["name"] == "jeff")
        #expect(try await client.post("/people/1/cars", #"{"name":"beetle","color":"red"}"#).json?["person_id"] == 1)
        #expect(try await client.get("/people/1/cars").json?.arrayValue?.count == 1)
        #expect(try await client.delete("/people/1").status == 204)
        let status = await server.stop(SIGINT)
        #expect(status == 0)
        let log = server.standardError
        #expect(log.contains("GET /people 200 "))
        #expect(log.contains("POST /people 201 "))
        #expect(log.contains("PUT /people/1 200 "))
        #expect(log.contains("DELETE /people/1 204 "))
        #expect(log.contains("stopped"))
    }

    @Test("replica serve with --store sqlite:, --data, --latency, --fail-rate and timeouts; SIGTERM stops it")
    func options() async throws {
        let directory = try TemporaryDirectory("replica-server")
        defer { directory.remove() }
        let data = directory.url("seed.json")
        try Data(#"{"people": [{"name": "ann"}, {"name": 3}], "cars": [{"name": "mini", "person_id": 1}]}"#.utf8).write(to: data)
        let database = directory.path("serve.sqlite")
        let server = try ServeProcess(["--schema", "Schemas/people.json", "--port", "0", "--store", "sqlite:\(database)",
                                       "--data", data.path, "--latency", "100-150", "--fail-rate", "0",
                                       "--header-timeout", "5", "--idle-timeout", "5"])
        let base = String(try await server.firstLine().dropFirst("Listening on ".count))
        let start = ContinuousClock.now
        let cars = try await Client(base: base).get("/people/1/cars")
        #expect(start.duration(to: .now) >= .milliseconds(100))
        #expect(cars.json?[0]?["name"] == "mini")
        // --idle-timeout 5: a connection that sends nothing is closed after 5 s, not the default 60 s. The
        // timeout is long because it also runs on the request's connection from the moment it is accepted: a
        // client in a test process starved by the parallel suite sent its request more than 0.3 s after
        // connecting, and the server had closed the connection by then (HTTPClientError.remoteConnectionClosed).
        let port = try #require(base.split(separator: ":").last.flatMap { Int($0) })
        let (silent, connectedAt) = try await onThread { Result { (try RawSocket(port: port), ContinuousClock.now) } }.get()
        let (quiet, closedAt) = await onThread { (silent.readToEnd(limit: .seconds(40)), ContinuousClock.now) }
        #expect(quiet.closed)
        let idle = connectedAt.duration(to: closedAt)
        #expect(idle >= .seconds(4) && idle < .seconds(40), "closed after \(idle)")
        #expect(await server.stop(SIGTERM) == 0)
        #expect(server.standardError.contains("loaded 2 objects, rejected 1"))
        #expect(FileManager.default.fileExists(atPath: database))
    }

    @Test("replica serve --data keeps values under dotted JSON keys and serves them nested")
    func nestedData() async throws {
        let directory = try TemporaryDirectory("replica-server")
        defer { directory.remove() }
        let schema = directory.url("places.json")
        try Data(Fixture.placesSchemaText.utf8).write(to: schema)
        let data = directory.url("seed.json")
        try Data(#"{"places": [{"id": 4, "name": "home", "address": {"city": "Paris", "geo": {"lat": 48.5}}}]}"#.utf8).write(to: data)
        let server = try ServeProcess(["--schema", schema.path, "--port", "0", "--data", data.path])
        let base = String(try await server.firstLine().dropFirst("Listening on ".count))
        let place = try await Client(base: base).get("/places/4")
        #expect(place.text == #"{"id":4,"name":"home","address":{"city":"Paris","zip":null,"geo":{"lat":48.5}}}"# + "\n")
        #expect(await server.stop(SIGINT) == 0)
        #expect(server.standardError.contains("loaded 1 objects, rejected 0"), "\(server.standardError)")
    }

    @Test("replica serve --store postgres://: two servers share one database; a server that cannot connect says where")
    func postgresStore() async throws {
        let url = try await PostgresCluster.start().makeDatabase()
        let directory = try TemporaryDirectory("replica-server")
        defer { directory.remove() }
        let data = directory.url("seed.json")
        try Data(#"{"people": [{"name": "ann"}, {"id": 7, "name": "bob"}]}"#.utf8).write(to: data)
        let first = try ServeProcess(["--schema", "Schemas/people.json", "--port", "0", "--store", url, "--data", data.path])
        let firstBase = String(try await first.firstLine().dropFirst("Listening on ".count))
        let second = try ServeProcess(["--schema", "Schemas/people.json", "--port", "0", "--store", url])
        let secondBase = String(try await second.firstLine().dropFirst("Listening on ".count))
        // Keys go on after the largest one loaded, as on SQLite.
        let created = try await Client(base: firstBase).post("/people", #"{"name":"cy"}"#)
        #expect(created.status == 201)
        #expect(created.json?["id"] == 8)
        let listed = try await Client(base: secondBase).get("/people?_sort=-name")
        #expect(listed.json?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["cy", "bob", "ann"])
        #expect(try await Client(base: secondBase).get("/people?name=bob").json?[0]?["id"] == 7)
        #expect(await first.stop(SIGINT) == 0)
        #expect(await second.stop(SIGINT) == 0)

        let refused = try ServeProcess(["--schema", "Schemas/people.json", "--port", "0", "--store",
                                        "postgres://app:hunter2@127.0.0.1:\(try PostgresCluster.freePort())/api"])
        #expect(await refused.finish() != 0)
        #expect(refused.standardError.contains("postgres://app@127.0.0.1:"), "\(refused.standardError)")
        #expect(refused.standardError.contains("connection refused"), "\(refused.standardError)")
        #expect(!refused.standardError.contains("hunter2"))
    }

    @Test("replica serve --format-extension .json serves /people.json and /people/1.json as /people and /people/1")
    func formatExtension() async throws {
        let server = try ServeProcess(["--schema", "Schemas/people.json", "--port", "0", "--format-extension", ".json"])
        let base = String(try await server.firstLine().dropFirst("Listening on ".count))
        let client = Client(base: base)
        #expect(try await client.post("/people.json", #"{"name":"john"}"#).status == 201)
        #expect(try await client.get("/people/1.json").json?["name"] == "john")
        #expect(try await client.get("/people/1").json?["name"] == "john")
        #expect(try await client.get("/people.json").json?.arrayValue?.count == 1)
        #expect(try await client.get("/people/1.xml").status == 404)
        #expect(await server.stop(SIGINT) == 0)
        #expect(server.standardError.contains("GET /people/1.json 200 "))
    }

    @Test("replica serve --pagination stripe --page-size 2 --max-page-size 3: Stripe's lists; cars=jira for one resource; --rate-limit's headers")
    func pagination() async throws {
        let server = try ServeProcess(["--schema", "Schemas/people.json", "--port", "0", "--pagination", "stripe", "--page-size", "2",
                                       "--max-page-size", "3", "--pagination", "cars=jira", "--rate-limit", "100/3600"])
        let base = String(try await server.firstLine().dropFirst("Listening on ".count))
        let client = Client(base: base)
        for name in ["ann", "bob", "cy", "dee"] {
            #expect(try await client.post("/people", #"{"name":"\#(name)"}"#).status == 201)
        }
        func person(_ id: Int, _ name: String) -> JSONValue {
            ["id": .int(Int64(id)), "name": .string(name), "numberOfKids": nil, "kilometersWalked": nil, "avatar": nil]
        }
        let first = try await client.get("/people")
        #expect(first.json == ["object": "list", "url": "/people", "has_more": true, "data": [person(1, "ann"), person(2, "bob")]])
        #expect(first.header("X-Total-Count") == "4")
        #expect(first.header("X-RateLimit-Limit") == "100")
        #expect(first.header("X-RateLimit-Remaining") == "95")
        let last = try await client.get("/people?starting_after=2")
        #expect(last.json == ["object": "list", "url": "/people", "has_more": false, "data": [person(3, "cy"), person(4, "dee")]])
        let capped = try await client.get("/people?limit=10")
        #expect(capped.json?["data"]?.arrayValue?.count == 3)
        #expect(capped.json?["has_more"] == true)
        let unknown = try await client.get("/people?starting_after=9")
        #expect(unknown.status == 400)
        #expect(unknown.json == ["error": ["type": "invalid_request_error", "message": "No such object: '9'", "param": "starting_after"]])
        let cars = try await client.get("/cars")
        #expect(cars.json == ["startAt": 0, "maxResults": 2, "total": 0, "isLast": true, "values": []])
        #expect(await server.stop(SIGINT) == 0)
        #expect(server.standardError.contains("GET /people?starting_after=9 400 "))
    }

    @Test("replica serve --pagination /v1/customers=stripe pages the schema's route as Stripe, the resource's own route as before")
    func paginationPerRoute() async throws {
        let directory = try TemporaryDirectory("replica-server")
        defer { directory.remove() }
        let schema = directory.url("shop.json")
        try Data(#"""
            {"name": "shop", "version": 1,
             "entities": {"Customer": {"table": "customers", "attributes": {"id": "string", "email": "string"}}},
             "routes": [{"path": "/v1/customers", "target": "Customer"}]}
            """#.utf8).write(to: schema)
        let data = directory.url("seed.json")
        try Data(#"{"customers": [{"id": "cus_1", "email": "a@x"}, {"id": "cus_2", "email": "b@x"}, {"id": "cus_3", "email": "c@x"}]}"#.utf8)
            .write(to: data)
        let server = try ServeProcess(["--schema", schema.path, "--data", data.path, "--port", "0",
                                       "--pagination", "/v1/customers=stripe", "--page-size", "2"])
        let base = String(try await server.firstLine().dropFirst("Listening on ".count))
        let client = Client(base: base)
        let first = try await client.get("/v1/customers")
        #expect(first.json == ["object": "list", "url": "/v1/customers", "has_more": true,
                               "data": [["id": "cus_1", "email": "a@x"], ["id": "cus_2", "email": "b@x"]]])
        let last = try await client.get("/v1/customers?starting_after=cus_2")
        #expect(last.json == ["object": "list", "url": "/v1/customers", "has_more": false, "data": [["id": "cus_3", "email": "c@x"]]])
        let missing = try await client.get("/v1/customers?starting_after=cus_9")
        #expect(missing.json == ["error": ["type": "invalid_request_error", "message": "No such object: 'cus_9'", "param": "starting_after"]])
        // RESTEasy's /customers keeps the server's style (link): everything, no paging.
        #expect(try await client.get("/customers").json?.arrayValue?.count == 3)
        #expect(await server.stop(SIGINT) == 0)
    }

    @Test("replica serve --help tells every pagination style with its request and answer")
    func paginationHelp() async throws {
        let help = try ServeProcess(["--help"])
        #expect(await help.finish() == 0)
        let text = help.standardOutput
        for style in MockPagination.allCases {
            #expect(text.contains("  \(style.rawValue) "), "\(style) is not in --help")
        }
        for shape in ["?limit=M&cursor=C", "?limit=M&starting_after=ID", "?startAt=N&maxResults=M", "?page[number]=N&page[size]=M",
                      "\"next_cursor\"", "\"has_more\"", "\"_embedded\"", "rel=\"next\"", "--rate-limit", "--page-size", "--max-page-size"] {
            #expect(text.contains(shape), "--help lacks \(shape)")
        }
    }

    @Test("replica serve rejects bad options with one line saying what to give")
    func badOptions() async throws {
        let cases: [([String], String)] = [
            (["--store", "redis"], "Error: --store takes memory, sqlite:PATH or postgres://USER@HOST:PORT/DB, not 'redis'"),
            (["--latency", "fast"], "Error: --latency takes MIN-MAX in milliseconds from 0 to 60000 (e.g. 50-200), not 'fast'"),
            (["--fail-rate", "2"], "Error: --fail-rate takes a probability from 0 to 1, not 2.0"),
            (["--schema", "/nonexistent.json"], "/nonexistent.json"),
            (["--header-timeout", "0"], "Error: --header-timeout takes a number of seconds above 0 up to 31536000, not 0.0"),
            (["--header-timeout=-1"], "Error: --header-timeout takes a number of seconds above 0 up to 31536000, not -1.0"),
            (["--idle-timeout", "inf"], "Error: --idle-timeout takes a number of seconds above 0 up to 31536000, not inf"),
            (["--idle-timeout", "nan"], "Error: --idle-timeout takes a number of seconds above 0 up to 31536000, not nan"),
            (["--body-timeout", "0"], "Error: --body-timeout takes a number of seconds above 0 up to 31536000, not 0.0"),
            (["--data", "/nonexistent-seed.json"], "/nonexistent-seed.json"),
            (["--format-extension", ""], "Error: --format-extension takes an extension such as .json, not ''"),
            (["--format-extension", "a/b"], "Error: --format-extension takes an extension such as .json, not 'a/b'"),
            (["--pagination", "pages"], "Error: --pagination takes STYLE, RESOURCE=STYLE or /PATH=STYLE with a style of "
                + "link, cursor, stripe, offset, jira, page, jsonapi, hal, gitlab, not 'pages'"),
            (["--pagination", "people=pages"], "Error: --pagination takes STYLE, RESOURCE=STYLE or /PATH=STYLE with a style of "
                + "link, cursor, stripe, offset, jira, page, jsonapi, hal, gitlab, not 'people=pages'"),
            (["--pagination", "cursor", "--pagination", "hal"], "Error: --pagination gives two styles for every collection: cursor and hal"),
            (["--schema", "Schemas/people.json", "--pagination", "dogs=cursor"],
             "--pagination dogs=cursor: no resource dogs (resources: people, cars)"),
            (["--schema", "Schemas/people.json", "--pagination", "/v1/dogs=stripe"],
             "--pagination /v1/dogs=stripe: the schema has no route /v1/dogs (routes: /cars, /cars/:id, /people, /people/:id, /people/:personID/cars)"),
            (["--page-size", "0"], "Error: --page-size takes a whole number from 1 to 1000000000, not 0"),
            (["--max-page-size=-3"], "Error: --max-page-size takes a whole number from 1 to 1000000000, not -3"),
            (["--rate-limit", "5"], "Error: --rate-limit takes N/SECONDS, a whole number of requests from 1 and seconds above 0 up to 86400 (e.g. 5/1), not '5'"),
            (["--rate-limit", "0/1"], "not '0/1'"),
        ]
        for (arguments, expected) in cases {
            let server = try ServeProcess(arguments + ["--port", "0"])
            #expect(await server.finish() != 0, "\(arguments)")
            #expect(server.standardError.contains(expected), "\(arguments): \(server.standardError)")
        }
    }
}
