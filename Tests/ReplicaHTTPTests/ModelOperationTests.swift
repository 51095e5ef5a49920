import Foundation
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing

@Suite("Client model operations and delegate against the mock server")
struct ModelOperationTests {
    @Test("save POSTs a new object and PUTs a known one; find and findAll sync and return rows; delete removes it")
    func saveFindDelete() async throws {
        let api = try await PeopleAPI.start()
        try await withTeardown {
            let created = try #require(try await api.client.save("Person", ["name": .string("john"), "numberOfKids": .integer(1)]))
            #expect(created["id"] == .integer(1))
            #expect(created["name"] == .string("john"))
            let renamed = try #require(try await api.client.save("Person", ["id": .integer(1), "name": .string("jeff")]))
            #expect(renamed["name"] == .string("jeff"))
            #expect(renamed["numberOfKids"] == .integer(1))

            _ = try await api.server.load(json: try JSONValue(parsing: #"{"people": [{"name": "ann"}]}"#))
            let all = try await api.client.findAll("Person")
            #expect(all.map { $0["name"] } == [.string("jeff"), .string("ann")])
            let found = try await api.client.find("Person", id: .integer(2))
            #expect(found?["name"] == .string("ann"))
            #expect(try await api.client.find("Person", id: .integer(42)) == nil)

            try await api.client.delete("Person", id: .integer(1))
            #expect(try api.rows("Person").map(\.primaryKey) == [.integer(2)])
            let gone = await #expect(throws: ClientError.self) { try await api.client.delete("Person", id: .integer(1)) }
            #expect(gone?.status == 404)
        } teardown: {
            await api.stop()
        }
    }

    @Test("save merges a terse reply into the values sent; findAll returns the rows of its response, in order")
    func mergeAndScope() async throws {
        let api = try await PeopleAPI.start()
        try await withTeardown {
            api.server.setController(TerseController(), for: "people")
            // The reply is {"id": 1}: the name and kids sent are kept.
            let john = try await api.client.save("Person", ["name": .string("john"), "numberOfKids": .integer(2)])
            #expect(john?["id"] == .integer(1) && john?["name"] == .string("john") && john?["numberOfKids"] == .integer(2))
            // An update answered 204: the values sent are stored.
            let renamed = try await api.client.save("Person", ["id": .integer(1), "name": .string("jeff")])
            #expect(renamed?["name"] == .string("jeff") && renamed?["numberOfKids"] == .integer(2))
            try await api.client.save("Person", ["name": .string("ann"), "numberOfKids": .integer(0)])
            try await api.client.save("Person", ["name": .string("bob"), "numberOfKids": .integer(5)])

            // The server filters: only its answer comes back, not the whole table.
            api.server.setController(CRUDController(), for: "people")
            let few = try await api.client.findAll("Person", params: ["numberOfKids": 5])
            #expect(few.map { $0["name"] } == [.string("bob")])
            // Every page 304: the rows the pages held.
            let all = try await api.client.findAll("Person")
            #expect(all.map { $0["name"] } == [.string("jeff"), .string("ann"), .string("bob")])
            let again = try await api.client.findAll("Person")
            #expect(again.map { $0["name"] } == [.string("jeff"), .string("ann"), .string("bob")])
        } teardown: {
            await api.stop()
        }
    }

    @Test("validation errors, plain or in ApiModel's namespace, 422 or 400: fieldErrors, hasErrors, errorMessages")
    func validationErrors() async throws {
        let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/people.json"))
        for style in [MockValidationErrors(), .apiModel, MockValidationErrors(status: 400, namespaced: true)] {
            var options = MockServerOptions()
            options.validationErrors = style
            let server = try await MockServer.start(resources: MockResource.resources(for: schema), options: options)
            try await withTeardown {
                let engine = try SQLiteReplica(store: Store.inMemory(schema: schema))
                let base = try #require(URL(string: server.baseURL))
                let client = ReplicaClient(engine: engine, configuration: ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: base]))
                do {
                    try await client.save("Person", ["name": .string("x"), "numberOfKids": .string("one")])
                    Issue.record("\(style): the server accepted numberOfKids \"one\"")
                } catch let error as ClientError {
                    #expect(error.status == style.status)
                    #expect(error.hasErrors && error.errorMessages == ["numberOfKids must be an integer"])
                    #expect(error.errorMessages(for: "numberOfKids") == ["must be an integer"] && error.errorMessages(for: "name").isEmpty)
                    let shape = style.namespaced ? #"{"person":{"errors":{"numberOfKids":["must be an integer"]}}}"#
                        : #"{"errors":{"numberOfKids":["must be an integer"]}}"#
                    #expect(error.bodyText.trimmingCharacters(in: .whitespacesAndNewlines) == shape)
                }
                #expect(try engine.store.rows("Person").isEmpty)
                // Other errors keep their own status and shape.
                let missing = await #expect(throws: ClientError.self) { try await client.call("/people/9") }
                #expect(missing?.status == 404 && missing?.hasErrors == false && missing?.errorMessages == [])
            } teardown: {
                await server.stop()
            }
        }
    }

    @Test("save carries files: multipart fields and the file, stored as the server keeps it")
    func saveWithFile() async throws {
        let api = try await PeopleAPI.start()
        try await withTeardown {
            let file = api.directory.url("ann.bin")
            let avatar: [UInt8] = (0 ..< 5000).map { UInt8($0 % 253) }
            try Data(avatar).write(to: file)
            let ann = try await api.client.save("Person", ["name": .string("ann"), "numberOfKids": .integer(2)],
                                                files: ["avatar": FileUpload(path: file.path)])
            #expect(ann?["name"] == .string("ann") && ann?["numberOfKids"] == .integer(2) && ann?["avatar"] == .data(avatar))
            let renamed = try await api.client.save("Person", ["id": .integer(1), "name": .string("anna")],
                                                    files: ["avatar": FileUpload(fileName: "b.bin", bytes: [1, 2, 3])])
            #expect(renamed?["name"] == .string("anna") && renamed?["avatar"] == .data([1, 2, 3]))
        } teardown: {
            await api.stop()
        }
    }

    @Test("the delegate hears didReturn and didFail on its queue")
    func delegate() async throws {
        let api = try await PeopleAPI.start()
        await withTeardown {
            let recorder = DelegateRecorder()
            let queue = DispatchQueue(label: "delegate")
            // Callbacks say which queue they ran on.
            queue.setSpecific(key: recorder.queueKey, value: "the delegate queue")
            api.client.call("/people", delegate: recorder, queue: queue)
            api.client.call("/people/:id", params: ["id": 9], delegate: recorder, queue: queue)
            var events: [String] = []
            for await event in recorder.events {
                events.append(event)
                if events.count == 2 { break }
            }
            #expect(events.sorted() == ["didFail /people/:id 404 on the delegate queue", "didReturn /people 200 on the delegate queue"])
        } teardown: {
            await api.stop()
        }
    }
}

/// Answers a create with the new id only and an update with no body, as terse APIs do.
struct TerseController: MockController {
    func index(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.index(request) }
    func show(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.show(request) }
    func create(_ request: MockRequest) async throws -> MockResponse {
        let created = try await MockCRUD.create(request)
        guard case .object(let object)? = created.body, let id = object["id"] else { return created }
        return MockResponse(status: 201, body: .object(["id": id]))
    }
    func update(_ request: MockRequest) async throws -> MockResponse {
        _ = try await MockCRUD.update(request)
        return MockResponse(status: 204)
    }
    func destroy(_ request: MockRequest) async throws -> MockResponse { try await MockCRUD.destroy(request) }
}

/// Collects delegate callbacks as an async stream. `@unchecked Sendable`: the continuation is thread-safe.
final class DelegateRecorder: ReplicaClientDelegate, @unchecked Sendable {
    let events: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation
    /// Set on the queue the test hands the client, read in the callbacks.
    let queueKey = DispatchSpecificKey<String>()

    init() { (events, continuation) = AsyncStream<String>.makeStream() }

    private var queue: String { DispatchQueue.getSpecific(key: queueKey) ?? "another queue" }

    func client(_ client: ReplicaClient, didReturn result: CallResult, forRoute route: String) {
        continuation.yield("didReturn \(route) \(result.status) on \(queue)")
    }

    func client(_ client: ReplicaClient, didFail error: any Error, forRoute route: String) {
        continuation.yield("didFail \(route) \((error as? ClientError)?.status ?? 0) on \(queue)")
    }
}

