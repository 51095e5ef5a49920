import Foundation
import Hummingbird
import NIOCore
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing

@Suite("Client over HTTP against the mock server")
struct ClientIntegrationTests {
    @Test("query, JSON, form and multipart (with a file) reach the server and sync back")
    func encodings() async throws {
        let api = try await PeopleAPI.start { $0.bodyEncodings["/people/:id"] = .form }
        try await withTeardown {
            let created = try await api.client.call("/people", method: .post, params: ["name": "john", "numberOfKids": 1])
            #expect(created.status == 201)
            #expect(created.changes["Person"]?.inserted.integers == [1])
            try await api.client.call("/people", method: .post, params: ["name": "ann", "numberOfKids": 2])

            let form = try await api.client.call("/people/:id", method: .put, params: ["id": 1, "name": "jeff", "numberOfKids": 3])
            #expect(form.changes["Person"]?.updated.integers == [1])
            let file = api.directory.url("avatar.bin")
            let avatar: [UInt8] = (0..<3000).map { UInt8($0 % 251) }
            try Data(avatar).write(to: file)
            let progress = ProgressSeen()
            let upload = FileUpload(fileName: "a.bin", mimeType: "application/octet-stream", path: file.path)
            let multipart = try await api.client.call("/people/2", method: .put, params: ["avatar": .file(upload)],
                                                      uploadProgress: { sent, total in progress.record(sent, total) })
            #expect(multipart.changes["Person"]?.updated.integers == [2])
            #expect(progress.last?.0 == progress.last?.1)
            #expect((progress.last?.0 ?? 0) > 3000)

            let filtered = try await api.client.call("/people", params: ["name": "jeff"])
            #expect(filtered.sync.objectCount == 1)
            try await api.client.call("/people/2")
            let people = try api.rows("Person")
            #expect(people.map { $0["name"] } == [.string("jeff"), .string("ann")])
            #expect(people[0]["numberOfKids"] == .integer(3))
            #expect(people[1]["avatar"] == .data(avatar))
        } teardown: {
            await api.stop()
        }
    }

    @Test("variable providers fill paths; nested routes fill the scope")
    func providers() async throws {
        let api = try await PeopleAPI.start { $0.variableProviders["personID"] = { "1" } }
        try await withTeardown {
            try await api.client.call("/people", method: .post, params: ["name": "john"])
            _ = try await api.server.load(json: try JSONValue(parsing: #"{"cars": [{"name": "beetle", "person_id": 1}, {"name": "mini", "person_id": 2}]}"#))
            let cars = try await api.client.call("/people/:personID/cars")
            #expect(cars.changes["Car"]?.inserted.integers == [1])
            #expect(try api.rows("Car").first?["personID"] == .integer(1))
        } teardown: {
            await api.stop()
        }
    }

    @Test("the retry interceptor rides out 503s the server injects; a 422 carries field errors")
    func retryAndValidation() async throws {
        let api = try await PeopleAPI.start { $0.interceptors = [RetryInterceptor(maxAttempts: 4, baseDelay: .milliseconds(1))] }
        try await withTeardown {
            let failures = FailFirst(count: 2)
            api.server.setController(failures, for: "people")
            let result = try await api.client.call("/people")
            #expect(result.status == 200)
            #expect(failures.calls == 3)

            let error = await #expect(throws: ClientError.self) {
                try await api.client.call("/people", method: .post, params: ["numberOfKids": "one"])
            }
            #expect(error?.status == 422)
            #expect(error?.fieldErrors == ["numberOfKids": ["must be an integer"]])
            #expect(try api.store.count("Person") == 0)
        } teardown: {
            await api.stop()
        }
    }

    @Test("a 304 leaves the store and its stale rows untouched")
    func notModified() async throws {
        let api = try await PeopleAPI.start()
        try await withTeardown {
            try await api.client.call("/people", method: .post, params: ["name": "john"])
            try await api.client.call("/people")
            try await api.store.database.write { db in try db.execute(sql: "INSERT INTO people (id, name) VALUES (99, 'local')") }
            let again = try await api.client.call("/people")
            #expect(again.notModified)
            #expect(try api.store.count("Person") == 2)
            try await api.client.call("/people", method: .post, params: ["name": "ann"])
            let changed = try await api.client.call("/people")
            #expect(changed.status == 200)
            #expect(changed.changes["Person"]?.deleted.integers == [99])
        } teardown: {
            await api.stop()
        }
    }

    @Test("five pages sync one scope; stale rows go after the last page")
    func pagination() async throws {
        let api = try await PeopleAPI.start()
        try await withTeardown {
            try await api.client.call("/people", method: .post, params: ["name": "john"])
            let cars = (1...10).map { #"{"name": "car\#($0)", "person_id": 1}"# }.joined(separator: ",")
            _ = try await api.server.load(json: try JSONValue(parsing: #"{"cars": [\#(cars)]}"#))
            try await api.store.database.write { db in
                try db.execute(sql: "INSERT INTO cars (id, name, personID) VALUES (999, 'stale', 1), (998, 'other', 2)")
            }
            let result = try await api.client.call("/people/1/cars", params: ["_limit": 2])
            #expect(result.pages == 5)
            #expect(result.changes["Car"]?.inserted.integers == Array(1...10))
            #expect(result.changes["Car"]?.deleted.integers == [999])
            #expect(try api.store.count("Car") == 11)
        } teardown: {
            await api.stop()
        }
    }

    @Test("periodic sync picks up a change made on the server; cancelling stops it")
    func periodic() async throws {
        let api = try await PeopleAPI.start()
        try await withTeardown {
            let (outcomes, continuation) = AsyncStream<Result<CallResult, any Error>>.makeStream()
            let task = api.client.keepSynced("/people", every: .milliseconds(50)) { continuation.yield($0) }
            var iterator = outcomes.makeAsyncIterator()
            let first = await iterator.next()
            #expect((try? first?.get())?.status == 200)
            _ = try await api.server.load(json: try JSONValue(parsing: #"{"people": [{"name": "added on the server"}]}"#))
            var seen = false
            for _ in 0..<100 {
                guard case .success(let result)? = await iterator.next() else { continue }
                if result.changes["Person"]?.inserted.integers == [1] { seen = true; break }
            }
            task.cancel()
            #expect(seen)
            #expect(try api.rows("Person").first?["name"] == .string("added on the server"))
        } teardown: {
            await api.stop()
        }
    }

    @Test("cancelling a call while the server has not answered yet stores nothing")
    func cancellation() async throws {
        let (sent, signal) = AsyncStream<Void>.makeStream()
        let api = try await PeopleAPI.start { configuration in
            configuration.interceptors = [ClosureInterceptor(before: { _ in signal.yield() })]
        }
        try await withTeardown { () async throws in
            api.server.setConditions(MockConditions(faults: [MockFault(.stall, probability: 1)]))
            let call = Task { try await api.client.call("/people") }
            var iterator = sent.makeAsyncIterator()
            _ = await iterator.next()
            call.cancel()
            let error = await #expect(throws: ClientError.self) { try await call.value }
            #expect(error?.code == .cancelled || error?.code == .connection)
            #expect(try api.store.count("Person") == 0)
        } teardown: {
            await api.stop()
        }
    }

    @Test("cancelling a call whose body is half parsed and staged rolls it back: none of it is stored")
    func cancellationMidBody() async throws {
        let api = try await PeopleAPI.start()
        try await withTeardown {
            let people = (1...300).map { JSONValue.object(["id": .int(Int64($0)), "name": .string("person \($0)")]) }
            try await api.server.load(json: .array(people), into: "people")
            api.server.setConditions(MockConditions(faults: [
                MockFault(.stallBody(afterBytes: 4000, duration: .seconds(30)), method: "GET", path: "/people"),
            ]))
            let (parsed, signal) = AsyncStream<Int>.makeStream()
            let options = SyncOptions(progress: { signal.yield($0.objectsWritten) }, progressInterval: 1)
            let call = Task { try await api.client.call("/people", options: options) }
            var iterator = parsed.makeAsyncIterator()
            // Objects from the first 4,000 bytes were parsed and staged before the body stalled.
            let objects = await iterator.next() ?? 0
            #expect(objects > 0)
            call.cancel()
            let error = await #expect(throws: (any Error).self) { try await call.value }
            #expect((error as? SyncError)?.code == .cancelled || (error as? ClientError)?.code == .cancelled, "\(String(describing: error))")
            #expect(try api.store.count("Person") == 0)
            // The store is usable and the next call is complete.
            api.server.setConditions(MockConditions())
            let again = try await api.client.call("/people")
            #expect(again.changes["Person"]?.inserted.count == 300)
        } teardown: {
            await api.stop()
        }
    }

    @Test("a streamed 500,000-object response is imported in bounded memory by `replica sync`")
    func streamedLargeResponse() async throws {
        let count = 500_000
        let router = Router()
        router.get("/people") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody { writer in
                var buffer = ByteBuffer(string: "[")
                for id in 1...count {
                    if id > 1 { buffer.writeString(",") }
                    buffer.writeString(#"{"id":\#(id),"name":"person \#(id)","numberOfKids":\#(id % 5),"kilometersWalked":\#(Double(id) / 10)}"#)
                    if buffer.readableBytes > 1 << 16 {
                        try await writer.write(buffer)
                        buffer.clear()
                    }
                }
                buffer.writeString("]")
                try await writer.write(buffer)
                try await writer.finish(nil)
            })
        }
        let directory = try TemporaryDirectory("replica-stream")
        defer { directory.remove() }
        let server = try await StreamingServer.start(router)
        let db = directory.path("people.sqlite")
        let output = try await withTeardown {
            try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", db, "--schema",
                                                              packageRoot.appendingPathComponent("Schemas/people.json").path,
                                                              "--base-url", "http://127.0.0.1:\(server.port)", "/people"])
        } teardown: {
            await server.stop()
        }
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout == "/people: 200, inserted \(count), updated 0, deleted 0 (\(count) objects)\n")
        #expect(try Store(path: db).count("Person") == count)
        // The body is about 35 MB; streaming keeps the child far below what holding it would take.
        #expect(output.peakMemory < 120 << 20, "peak \(output.peakMemory >> 20) MiB")
    }
}

/// A people controller that answers 503 (Retry-After: 0) to its first `count` index requests.
final class FailFirst: MockController, @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var seen = 0
    let count: Int

    init(count: Int) { self.count = count }

    var calls: Int { lock.withLock { seen } }

    func index(_ request: MockRequest) async throws -> MockResponse {
        let call = lock.withLock { seen += 1; return seen }
        if call <= count { return MockResponse(status: 503, headers: [("Retry-After", "0")], body: ["error": "busy"]) }
        return try await MockCRUD.index(request)
    }
}

/// Upload progress reports. `@unchecked Sendable`: guarded by `lock`.
final class ProgressSeen: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [(Int64, Int64?)] = []
    func record(_ sent: Int64, _ total: Int64?) { lock.withLock { values.append((sent, total)) } }
    var last: (Int64, Int64?)? { lock.withLock { values.last } }
}
