import Foundation
import Hummingbird
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing

@Suite("Typed endpoints over HTTP against the mock server")
struct EndpointTests {
    struct NewPerson: Encodable, Sendable { var name: String; var numberOfKids: Int }
    struct Person: Codable, Equatable, Sendable { var id: Int; var name: String; var numberOfKids: Int? }
    struct Search: Encodable, Sendable { var name: String }

    @Test("JSON, query, form and multipart bodies; :var, {var} and {{hyphen-var}} paths; responses synced into the store")
    func typedCalls() async throws {
        let api = try await PeopleAPI.start()
        try await withTeardown {
            let create = Endpoint<NewPerson, Person>(.post, "/people")
            let john = try await api.client.perform(create, NewPerson(name: "john", numberOfKids: 1))
            #expect(john == Person(id: 1, name: "john", numberOfKids: 1))
            _ = try await api.client.perform(create, NewPerson(name: "ann", numberOfKids: 2))
            // The POST's answers were synced through GET /people's route, without deleting anyone.
            #expect(try api.rows("Person").map { $0["name"] } == [.string("john"), .string("ann")])

            let find = Endpoint<Nothing, Person>(.get, "/people/{{person-id}}")
            #expect(try await api.client.perform(find, Nothing(), pathVariables: ["person-id": "2"]).name == "ann")
            let braces = Endpoint<Nothing, Person>(.get, "/people/{id}")
            #expect(try await api.client.perform(braces, Nothing(), pathVariables: ["id": "1"]).name == "john")
            #expect(Endpoint<Nothing, Person>(.get, "/people/:id/cars/{{car-id}}").variables == ["id", "car-id"])

            // Form-encoded PUT through /people/:id, then the change is in the store.
            let rename = Endpoint<NewPerson, Person>(.put, "/people/:id", encoding: .form)
            let jeff = try await api.client.perform(rename, NewPerson(name: "jeff", numberOfKids: 3), pathVariables: ["id": "1"])
            #expect(jeff == Person(id: 1, name: "jeff", numberOfKids: 3))
            #expect(try api.rows("Person").first?["name"] == .string("jeff"))

            // A query-encoded GET of a collection filters on the server.
            let search = Endpoint<Search, [Person]>(.get, "/people")
            #expect(try await api.client.perform(search, Search(name: "ann")).map(\.name) == ["ann"])
            // As with `call`, a GET through a route that deletes stale rows is the whole collection:
            // the filtered answer leaves ann alone in the store.
            #expect(try api.rows("Person").map { $0["name"] } == [.string("ann")])

            // Multipart: the value's fields beside a file.
            let file = api.directory.url("avatar.bin")
            let avatar: [UInt8] = (0..<2000).map { UInt8($0 % 251) }
            try Data(avatar).write(to: file)
            let upload = Endpoint<Search, Person>(.put, "/people/:id")
            let uploaded = try await api.client.perform(upload, Search(name: "ann b"), pathVariables: ["id": "2"],
                                                        files: ["avatar": FileUpload(fileName: "a.bin", mimeType: "application/octet-stream", path: file.path)])
            #expect(uploaded.name == "ann b")
            #expect(try api.rows("Person").last?["avatar"] == .data(avatar))
            #expect(try api.rows("Person").map { $0["name"] } == [.string("ann b")])
        } teardown: {
            await api.stop()
        }
    }

    struct NewCar: Encodable, Sendable { var name: String; var color: String }

    @Test("the queued form: a POST through a nested path is a local create with the path's scope, a PATCH and a DELETE of an object's path change and delete its row; push sends them")
    func performedLocally() async throws {
        let api = try await PeopleAPI.start()
        try await withTeardown {
            let john = try await api.client.perform(Endpoint<NewPerson, Person>(.post, "/people"), NewPerson(name: "john", numberOfKids: 1))
            let addCar = Endpoint<NewCar, Nothing>(.post, "/people/{{person-id}}/cars")
            let created = try #require(try await api.client.performLocally(addCar, NewCar(name: "beetle", color: "red"),
                                                                           pathVariables: ["person-id": "1"]))
            #expect(created.description == "#1 create Car -1 (color, name, personID)")
            #expect(created.changes["personID"] == .integer(1))
            #expect(try api.rows("Car").map { "\($0["id"] ?? .null) \($0["name"] ?? .null) of \($0["personID"] ?? .null)" } == ["-1 beetle of 1"])

            let rename = Endpoint<Search, Person>(.patch, "/people/:id")
            let renamed = try #require(try await api.client.performLocally(rename, Search(name: "johnny"), pathVariables: ["id": "\(john.id)"]))
            #expect(renamed.description == "#2 update Person 1 (id, name)")
            #expect(try api.rows("Person").map { $0["name"] } == [.string("johnny")])
            // Nothing has reached the API yet; a push sends both.
            #expect(try await api.client.perform(Endpoint<Nothing, Person>(.get, "/people/1"), Nothing()).name == "john")
            #expect(try api.rows("Person").map { $0["name"] } == [.string("johnny")])
            #expect(try await api.client.push().description == "2 confirmed, 0 rejected, 0 still pending")
            #expect(try api.rows("Car").map { $0["id"] } == [.integer(1)])
            let cars = try await api.client.perform(Endpoint<Nothing, [Car]>(.get, "/people/1/cars"), Nothing())
            #expect(cars == [Car(id: 1, name: "beetle", color: "red")])

            let drop = Endpoint<Nothing, Nothing>(.delete, "/cars/:id")
            let deleted = try await api.client.performLocally(drop, Nothing(), pathVariables: ["id": "1"])
            #expect(deleted?.description == "#3 delete Car 1")
            #expect(try api.rows("Car").isEmpty)
            #expect(try await api.client.push().confirmed.count == 1)
            #expect(try await api.client.perform(Endpoint<Nothing, [Car]>(.get, "/cars"), Nothing()).isEmpty)

            // What has no queued form says why; nothing is written.
            await #expect {
                try await api.client.performLocally(Endpoint<Search, [Person]>(.get, "/people"), Search(name: "x"))
            } throws: { ($0 as? ClientError)?.message == "GET /people: only a POST, PUT, PATCH or DELETE has a queued form" }
            await #expect {
                try await api.client.performLocally(Endpoint<Search, Person>(.post, "/nowhere"), Search(name: "x"))
            } throws: { ($0 as? ClientError)?.message.hasPrefix("POST /nowhere: no route of the schema matches the path") == true }
            await #expect {
                try await api.client.performLocally(Endpoint<Nothing, Nothing>(.delete, "/people"), Nothing())
            } throws: { ($0 as? ClientError)?.message == "DELETE /people: the path names no one Person to delete" }
            #expect(try await api.engine.outbox().isEmpty)
        } teardown: {
            await api.stop()
        }
    }

    struct Car: Codable, Equatable, Sendable { var id: Int; var name: String; var color: String }

    @Test("an API that refuses connections: the push answers at once with the writes pending and the error said plainly")
    func refusedConnections() async throws {
        let api = try await PeopleAPI.start()
        try await withTeardown {
            try await api.engine.saveLocally("Person", ["name": .string("ann")])
            await api.server.stop()
            let clock = ContinuousClock()
            let started = clock.now
            let pushed = try await api.client.push()
            // Not retried until a connect timeout (AsyncHTTPClient's would be 90 s, the request's is 60 s).
            #expect(started.duration(to: clock.now) < .seconds(30))
            #expect(pushed.description == "0 confirmed, 0 rejected, 1 still pending")
            let error = try #require(pushed.pending.first?.lastError)
            #expect(error.hasPrefix("POST \(api.server.baseURL)/people: connection refused (errno "))
        } teardown: {
            await api.stop()
        }
    }

    @Test("an empty 2xx body is nil for an optional response and Nothing for Nothing, an error otherwise; errors name what failed")
    func emptyBodiesAndErrors() async throws {
        let api = try await PeopleAPI.start()
        try await withTeardown {
            _ = try await api.client.perform(Endpoint<NewPerson, Person>(.post, "/people"), NewPerson(name: "john", numberOfKids: 1))
            // DELETE answers 204: Nothing, and the row is deleted locally too.
            try await api.client.perform(Endpoint<Nothing, Nothing>(.delete, "/people/:id"), Nothing(), pathVariables: ["id": "1"])
            #expect(try api.rows("Person").isEmpty)
            _ = try await api.client.perform(Endpoint<NewPerson, Person>(.post, "/people"), NewPerson(name: "ann", numberOfKids: 0))
            let optional = try await api.client.perform(Endpoint<Nothing, Person?>(.delete, "/people/:id"), Nothing(),
                                                        pathVariables: ["id": "2"])
            #expect(optional == nil)
            await #expect(throws: ClientError.self) {
                _ = try await api.client.perform(Endpoint<Nothing, Person>(.delete, "/people/:id"), Nothing(), pathVariables: ["id": "3"])
            }
            do {
                _ = try await api.client.perform(Endpoint<NewPerson, Person>(.post, "/people"), NewPerson(name: "cleo", numberOfKids: 1))
                _ = try await api.client.perform(Endpoint<Nothing, Person>(.delete, "/people/:id"), Nothing(), pathVariables: ["id": "3"])
                Issue.record("an empty body decoded into a non-optional Person")
            } catch let error as ClientError {
                #expect(error.code == .emptyBody && error.status == 204, "\(error)")
                #expect(error.message.contains("empty body; Person needs one"), "\(error)")
            }
            // A body that does not decode: the store is unchanged.
            struct Strict: Decodable, Sendable { var id: Int; var missing: String }
            let before = try api.rows("Person").count
            do {
                _ = try await api.client.perform(Endpoint<NewPerson, Strict>(.post, "/people"), NewPerson(name: "dan", numberOfKids: 0))
                Issue.record("decoded a body without 'missing'")
            } catch let error as ClientError {
                #expect(error.code == .invalidResponse && error.message.contains("missing key 'missing'"), "\(error)")
            }
            #expect(try api.rows("Person").count == before)
            // A 404 is a status error; a missing variable is named.
            await #expect(throws: ClientError.self) {
                _ = try await api.client.perform(Endpoint<Nothing, Person>(.get, "/people/:id"), Nothing(), pathVariables: ["id": "99"])
            }
            do {
                _ = try await api.client.perform(Endpoint<Nothing, Person>(.get, "/people/{{person-id}}"), Nothing())
            } catch let error as ClientError {
                #expect(error.code == .invalidRequest && error.message == "missing value for variable 'person-id' of /people/{{person-id}}")
            }
        } teardown: {
            await api.stop()
        }
    }
}
