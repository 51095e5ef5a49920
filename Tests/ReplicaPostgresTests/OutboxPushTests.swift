import Foundation
import Replica
import ReplicaCore
import ReplicaHTTP
import ReplicaPostgres
import ReplicaServer
import ReplicaTestSupport
import Testing

/// The outbox's sender against the mock API over HTTP, on SQLite and PostgreSQL: writes queued
/// while the API is down reach it once it is up, each exactly once.
@Suite("Outbox: pushing local writes to the mock API, on SQLite and PostgreSQL")
struct OutboxPushTests {
    /// A mock API of people, a store of one kind, and a client between them.
    struct Loop {
        let server: MockServer
        let transport: HTTPTransport
        let test: TestStore
        let client: ReplicaClient

        static func start(_ kind: StoreKind, people: String = #"[{"id": 1, "name": "Ann"}, {"id": 2, "name": "Bob"}]"#,
                          schema: Schema? = nil, options: MockServerOptions = MockServerOptions(), interceptors: [any Interceptor] = [],
                          configure: (inout ClientConfiguration) -> Void = { _ in }) async throws -> Loop {
            let schema = try schema ?? TestStore.schema()
            let server = try await MockServer.start(resources: MockResource.resources(for: schema), options: options)
            _ = try await server.load(json: try JSONValue(parsing: people), into: "people")
            let test = try await TestStore.make(kind, schema: schema)
            let transport = HTTPTransport()
            var configuration = ClientConfiguration(transport: transport, baseURLs: [.production: try #require(URL(string: server.baseURL))])
            configuration.interceptors = interceptors
            configure(&configuration)
            let client = ReplicaClient(store: test.store, configuration: configuration)
            _ = try await client.call("/people")
            return Loop(server: server, transport: transport, test: test, client: client)
        }

        var store: any ReplicaStore { test.store }

        /// The local rows, `id: name`, by key.
        func local() async throws -> [String] {
            try await store.rows(RowQuery("Person", sort: [.ascending("id")])).map { "\($0["id"] ?? .null): \($0["name"] ?? .null)" }
        }

        /// The API's rows, `id: name`, read with a fresh store of its own.
        func remote() async throws -> [String] {
            try await remoteRows("/people", "Person", sort: "id").map { "\($0["id"] ?? .null): \($0["name"] ?? .null)" }
        }

        /// The API's rows of a collection, read with a fresh store of its own.
        func remoteRows(_ path: String, _ entity: String, sort: String) async throws -> [EntityRow] {
            let reader = try SQLiteReplica(store: Store.inMemory(schema: try TestStore.schema()))
            let configuration = ClientConfiguration(transport: transport, baseURLs: [.production: try #require(URL(string: server.baseURL))])
            _ = try await ReplicaClient(store: reader, configuration: configuration).call(path)
            return try await reader.rows(RowQuery(entity, sort: [.ascending(sort)]))
        }

        func stop() async {
            try? await transport.shutdown()
            await server.stop()
            await test.close()
        }
    }

    @Test("written while the API is down, pending with the attempt counted, sent once it is up: a new row takes the API's key",
          arguments: StoreKind.allCases)
    func downThenUp(kind: StoreKind) async throws {
        let loop = try await Loop.start(kind)
        try await withTeardown {
            let store = loop.store
            loop.server.goDown()
            let created = try await store.saveLocally("Person", ["name": .string("Cy")])
            try await store.saveLocally("Person", ["id": .integer(1), "name": .string("Anna")])
            try await store.deleteLocally("Person", key: .integer(2))
            #expect(try await loop.local() == ["-1: Cy", "1: Anna"])

            let offline = try await loop.client.push()
            #expect(offline.description == "0 confirmed, 0 rejected, 3 still pending")
            let waiting = try await store.outbox()
            #expect(waiting.map(\.attempts) == [1, 1, 1])
            #expect(waiting.allSatisfy { $0.lastError?.contains("503") == true })

            loop.server.comeUp()
            #expect(try await loop.remote() == ["1: Ann", "2: Bob"])
            let online = try await loop.client.push()
            #expect(online.description == "3 confirmed, 0 rejected, 0 still pending")
            #expect(online.confirmed.first { $0.id == created.id }?.kind == .create)
            #expect(try await store.outbox().isEmpty)
            // The temporary row is now the API's row 3.
            #expect(try await loop.local() == ["1: Anna", "3: Cy"])
            #expect(try await loop.remote() == ["1: Anna", "3: Cy"])
            // A sync changes nothing: the store was the server's data already.
            let synced = try await loop.client.call("/people")
            #expect(synced.changes.isEmpty)
        } teardown: {
            await loop.stop()
        }
    }

    /// Sends every request on, then loses the answer of the first `count` POSTs, as a process
    /// killed between the API's reply and the confirmation's commit would.
    final class LosingAnswers: Interceptor {
        let left: Locked<Int>

        init(_ count: Int) { left = Locked(count) }

        func intercept(_ request: ClientRequest, next: Next) async throws -> ClientResponse {
            let response = try await next(request)
            let lose = request.method == .post && left.withLock { left in
                defer { left -= 1 }
                return left > 0
            }
            guard lose else { return response }
            _ = try await response.body.collect(upTo: 1 << 20)
            throw ClientError(.connection, "the answer was lost", request: "\(request.method) \(request.url)")
        }
    }

    @Test("an answer lost after the API applied a create: sent again with its Idempotency-Key, the API does not create twice",
          arguments: StoreKind.allCases)
    func lostAnswer(kind: StoreKind) async throws {
        let loop = try await Loop.start(kind, interceptors: [LosingAnswers(1)])
        try await withTeardown {
            let store = loop.store
            try await store.saveLocally("Person", ["name": .string("Cy")])
            let first = try await loop.client.push()
            #expect(first.pending.map(\.lastError) == ["connection: the answer was lost (POST \(loop.server.baseURL)/people)"]
                    || first.pending.count == 1)
            #expect(try await loop.remote() == ["1: Ann", "2: Bob", "3: Cy"])
            let second = try await loop.client.push()
            #expect(second.confirmed.count == 1)
            #expect(try await loop.remote() == ["1: Ann", "2: Bob", "3: Cy"])
            #expect(try await loop.local() == ["1: Ann", "2: Bob", "3: Cy"])
        } teardown: {
            await loop.stop()
        }
    }

    /// RESTEasy's people, refusing an empty name with 422 and field errors, as Rails does.
    struct RequiringNames: MockController {
        func check(_ request: MockRequest) throws {
            if case .object(let object)? = request.body, case .string(let name)? = object["name"], name.isEmpty {
                throw MockHTTPError.unprocessable([("name", ["can't be blank"])])
            }
        }

        func create(_ request: MockRequest) async throws -> MockResponse {
            try check(request)
            return try await MockCRUD.create(request)
        }

        func update(_ request: MockRequest) async throws -> MockResponse {
            try check(request)
            return try await MockCRUD.update(request)
        }
    }

    @Test("a 422 rejects the mutation with its body and takes the change back; corrected and retried, it is confirmed",
          arguments: StoreKind.allCases)
    func rejectedThenRetried(kind: StoreKind) async throws {
        let loop = try await Loop.start(kind)
        try await withTeardown {
            let store = loop.store
            loop.server.setController(RequiringNames(), for: "people")
            let update = try await store.saveLocally("Person", ["id": .integer(1), "name": .string("")])
            let create = try await store.saveLocally("Person", ["name": .string("")])
            #expect(try await loop.local() == ["-1: ", "1: ", "2: Bob"])

            let pushed = try await loop.client.push()
            #expect(pushed.description == "0 confirmed, 2 rejected, 0 still pending")
            let rejected = try await store.outbox(.rejected)
            #expect(rejected.map(\.id) == [update.id, create.id])
            #expect(rejected.map { $0.rejection?.status } == [422, 422])
            #expect(rejected.first?.rejection?.body.contains("can't be blank") == true)
            // Read as the API's error: the field to correct and why.
            #expect(rejected.first?.rejection?.error.fieldErrors == ["name": ["can't be blank"]])
            #expect(rejected.first?.rejection?.error.description == "HTTP 422: name can't be blank")
            // Taken back: the update's row is the API's again, the create's row is gone.
            let reverted = try await loop.local()
            #expect(reverted == ["1: Ann", "2: Bob"])
            #expect(try await store.pendingKeys("Person").isEmpty)

            try await store.retryMutation(update.id, changes: ["id": .integer(1), "name": .string("Annie")])
            #expect(try await store.outbox(.pending).first?.idempotencyKey != update.idempotencyKey)
            try await store.discardMutation(create.id)
            #expect(try await loop.local() == ["1: Annie", "2: Bob"])
            let retried = try await loop.client.push()
            #expect(retried.description == "1 confirmed, 0 rejected, 0 still pending")
            #expect(try await store.outbox().isEmpty)
            #expect(try await loop.remote() == ["1: Annie", "2: Bob"])
        } teardown: {
            await loop.stop()
        }
    }

    /// The API's cars, `name: person_id`.
    static func remoteCars(_ loop: Loop) async throws -> [String] {
        try await loop.remoteRows("/cars", "Car", sort: "name").map { "\($0["name"] ?? .null): \($0["personID"] ?? .null)" }
    }

    @Test("a row that names another's temporary key waits for that create and goes with the API's key; if the create is refused, it is held",
          arguments: StoreKind.allCases)
    func dependentCreates(kind: StoreKind) async throws {
        let loop = try await Loop.start(kind)
        try await withTeardown {
            let store = loop.store
            let dee = try await store.saveLocally("Person", ["name": .string("Dee")])
            // Sent first if nothing held it back: rows go concurrently, in no order between them.
            try await store.saveLocally("Car", ["name": .string("beetle"), "color": .string("red"), "personID": dee.key])
            try await store.saveLocally("Car", ["name": .string("mini"), "color": .string("blue"), "personID": .integer(1)])
            let pushed = try await loop.client.push(concurrency: 4)
            #expect(pushed.description == "3 confirmed, 0 rejected, 0 still pending")
            #expect(try await Self.remoteCars(loop) == ["beetle: 3", "mini: 1"])
            let local = try await store.rows(RowQuery("Car", sort: [.ascending("name")])).map { "\($0["name"] ?? .null): \($0["personID"] ?? .null)" }
            #expect(local == ["beetle: 3", "mini: 1"])

            // The API refuses the person: the car that names it is not sent.
            loop.server.setController(RequiringNames(), for: "people")
            let nobody = try await store.saveLocally("Person", ["name": .string("")])
            let car = try await store.saveLocally("Car", ["name": .string("zephyr"), "color": .string("grey"), "personID": nobody.key])
            let refused = try await loop.client.push(concurrency: 4)
            #expect(refused.description == "0 confirmed, 1 rejected, 1 still pending")
            #expect(refused.pending.map(\.id) == [car.id])
            #expect(refused.pending.first?.attempts == 0)
            #expect(refused.pending.first?.lastError == "not sent: it names Person \(nobody.key), whose create #\(nobody.id) the API has not confirmed")
            #expect(try await Self.remoteCars(loop) == ["beetle: 3", "mini: 1"])
        } teardown: {
            await loop.stop()
        }
    }

    @Test("answers that arrive together are confirmed together: fewer transactions than creates, each create once",
          arguments: StoreKind.allCases)
    func groupCommit(kind: StoreKind) async throws {
        var options = MockServerOptions()
        options.conditions.latency = .milliseconds(50) ... .milliseconds(50)
        let loop = try await Loop.start(kind, options: options)
        try await withTeardown {
            let store = loop.store
            for index in 0..<24 { try await store.saveLocally("Person", ["name": .string("P\(index)")]) }
            // The rows each change set gave the API's key.
            let rekeyed = Locked<[Int]>([])
            let token = await store.addObserver(for: ["Person"], queue: DispatchQueue(label: "test.commits")) { changes in
                rekeyed.withLock { $0.append(changes["Person"]?.rekeyed.count ?? 0) }
            }
            defer { store.removeObserver(token) }
            let pushed = try await loop.client.push(concurrency: 24)
            #expect(pushed.description == "24 confirmed, 0 rejected, 0 still pending")
            let remote = try await loop.remote()
            #expect(remote.count == 26)
            let names: [String] = remote.dropFirst(2).map { line in String(line.split(separator: " ").last ?? "") }
            #expect(Set(names).count == 24)
            #expect(try await loop.local() == remote)
            try await waitUntil("the change sets", timeout: .seconds(10)) { rekeyed.withLock { $0.reduce(0, +) } == 24 }
            // 24 answers within a few milliseconds of each other: while one transaction commits, the
            // others wait for the next, which confirms them all.
            let groups = rekeyed.withLock { $0.filter { $0 > 0 } }
            #expect(groups.count < 24)
            #expect((groups.max() ?? 0) > 1)
        } teardown: {
            await loop.stop()
        }
    }

    @Test("a DELETE the API answers 404 is confirmed: the object is gone either way", arguments: StoreKind.allCases)
    func deleteOfMissing(kind: StoreKind) async throws {
        let loop = try await Loop.start(kind)
        try await withTeardown {
            let store = loop.store
            try await store.deleteLocally("Person", key: .integer(2))
            _ = try await loop.server.options.store.delete(try #require(loop.server.resources.first { $0.name == "people" }), id: .int(2))
            let pushed = try await loop.client.push()
            #expect(pushed.description == "1 confirmed, 0 rejected, 0 still pending")
            #expect(try await store.outbox().isEmpty)
            #expect(try await loop.local() == ["1: Ann"])
        } teardown: {
            await loop.stop()
        }
    }
}
