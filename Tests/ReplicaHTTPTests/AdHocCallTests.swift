import Foundation
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing

/// A client whose schema knows people only, against a mock server that also serves cars.
struct PartialAPI {
    let server: MockServer
    let engine: SQLiteReplica
    let client: ReplicaClient

    static func start() async throws -> PartialAPI {
        let full = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/people.json"))
        let server = try await MockServer.start(resources: MockResource.resources(for: full))
        let partial = try Schema(name: "partial", routes: [
            Route(.get, "/people", target: .entity("Person"), stale: .delete),
            Route(.get, "/people/:id", target: .entity("Person")),
        ]) {
            Entity("Person", tableName: "people") {
                Attribute("id", .integer); Attribute("name", .string); Attribute("numberOfKids", .integer)
                Attribute("kilometersWalked", .double); Attribute("avatar", .data)
            }
        }
        let engine = try SQLiteReplica(store: Store.inMemory(schema: partial))
        guard let base = URL(string: server.baseURL) else { throw ClientError(.invalidRequest, server.baseURL) }
        let client = ReplicaClient(engine: engine, configuration: ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: base]))
        _ = try await server.load(json: try JSONValue(parsing: """
            {"people": [{"id": 1, "name": "john", "numberOfKids": 1}],
             "cars": [{"id": 1, "name": "beetle", "color": "red", "person_id": 1}, {"id": 2, "name": "mini", "color": "blue", "person_id": 1}]}
            """))
        return PartialAPI(server: server, engine: engine, client: client)
    }
}

@Suite("Ad-hoc calls and the delegate's JSON, over HTTP")
struct AdHocCallTests {
    struct Car: Decodable, Equatable { var id: Int; var name: String; var color: String }
    struct Person: Decodable, Equatable { var id: Int; var name: String }

    @Test("a path with no route returns its JSON (or decodes it) and syncs nothing; a routed one decodes and syncs")
    func adHoc() async throws {
        let api = try await PartialAPI.start()
        try await withTeardown {
        let cars = try await api.client.call("/cars")
        #expect(cars.status == 200 && cars.changes.isEmpty && cars.route == "/cars")
        guard case .array(let items)? = cars.data else {
            Issue.record("no JSON array: \(String(describing: cars.data))")
            return
        }
        #expect(items.count == 2)
        #expect(try await api.client.call("/cars", params: ["color": "blue"], as: [Car].self)
                == [Car(id: 2, name: "mini", color: "blue")])
        #expect(try await api.client.call("/people/1/cars", as: [Car].self).count == 2)
        // Routed: decoded and synced in the same call.
        #expect(try await api.client.call("/people/:id", params: ["id": 1], as: Person.self) == Person(id: 1, name: "john"))
        #expect(try api.engine.store.rows("Person").map { $0["name"] } == [.string("john")])
        // No body: data is nil; Nothing or an optional decode it; a plain type does not.
        let deleted = try await api.client.call("/cars/1", method: .delete)
        #expect(deleted.status == 204 && deleted.data == nil)
        _ = try await api.client.call("/cars/2", method: .delete, as: Nothing.self)
        let missing = await #expect(throws: ClientError.self) { try await api.client.call("/cars/2", as: Car.self) }
        #expect(missing?.status == 404)
        } teardown: {
            await api.server.stop()
        }
    }

    @Test("the delegate hears the JSON of every call, routed or not, before the result")
    func delegateJSON() async throws {
        let api = try await PartialAPI.start()
        await withTeardown {
        let recorder = JSONRecorder()
        let queue = DispatchQueue(label: "delegate")
        api.client.call("/people", delegate: recorder, queue: queue)
        var events: [String] = []
        for await event in recorder.events {
            events.append(event)
            if events.count == 2 { break }
        }
        #expect(events == [#"json /people [{"avatar":null,"id":1,"kilometersWalked":null,"name":"john","numberOfKids":1}]"#,
                           "didReturn /people 200"])
        api.client.call("/cars/:id", params: ["id": 2], delegate: recorder, queue: queue)
        events = []
        for await event in recorder.events {
            events.append(event)
            if events.count == 2 { break }
        }
        #expect(events == [#"json /cars/2 {"color":"blue","id":2,"name":"mini","person_id":1}"#, "didReturn /cars/2 200"], "\(events)")
        } teardown: {
            await api.server.stop()
        }
    }
}

/// Records the JSON and results a delegate hears. `@unchecked Sendable`: the continuation is thread-safe.
final class JSONRecorder: ReplicaClientDelegate, @unchecked Sendable {
    let events: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation

    init() { (events, continuation) = AsyncStream<String>.makeStream() }

    func client(_ client: ReplicaClient, didReturnJSON json: JSONValue?, forRoute route: String) {
        continuation.yield("json \(route) \(json.map { $0.serialized(pretty: false, sortedKeys: true) } ?? "nil")")
    }

    func client(_ client: ReplicaClient, didReturn result: CallResult, forRoute route: String) {
        continuation.yield("didReturn \(route) \(result.status)")
    }

    func client(_ client: ReplicaClient, didFail error: any Error, forRoute route: String) {
        continuation.yield("didFail \(route) \(error)")
    }
}
