import Foundation
import Replica
import ReplicaExamples
import ReplicaHTTP
import ReplicaPostgres
import ReplicaServer
import ReplicaTestSupport
import Testing

/// The README's PostgreSQL examples, run against the test cluster and the mock server.
@Suite("README PostgreSQL examples, run")
struct PostgresExampleRunTests {
    static let schemaFile = packageRoot.appendingPathComponent("Schemas/people.json")

    @Test("the PostgreSQL example imports people; the live example counts the parents; the client example syncs three pages")
    func postgresExamples() async throws {
        let url = try await PostgresCluster.start().makeDatabase()
        let people = FileManager.default.temporaryDirectory.appendingPathComponent("people-\(UUID().uuidString).json")
        let json = "[" + (1...5).map { #"{"id": \#($0), "name": "P\#($0)", "numberOfKids": \#($0)}"# }.joined(separator: ", ") + "]"
        try Data(json.utf8).write(to: people)
        defer { try? FileManager.default.removeItem(at: people) }
        let parents = try await postgresExample(url: url, schemaFile: Self.schemaFile, peopleFile: people.path)
        #expect(parents.map(\.primaryKey) == [.integer(3), .integer(4), .integer(5)])
        #expect(try await postgresLiveExample(url: url) == 3)

        let server = try await MockServer.start(resources: MockResource.resources(for: try Schema(contentsOf: Self.schemaFile)))
        let transport = HTTPTransport()
        try await withTeardown {
            _ = try await server.load(json: try JSONValue(parsing: #"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}, {"id": 3, "name": "cy"}]"#),
                                      into: "people")
            let clientURL = try await PostgresCluster.start().makeDatabase()
            let api = try #require(URL(string: server.baseURL))
            let result = try await postgresClientExample(url: clientURL, schemaFile: Self.schemaFile, api: api, transport: transport)
            #expect(result.status == 200)
            #expect(result.pages == 2)
            #expect(result.changes["Person"]?.inserted.integers == [1, 2, 3])
            let again = try await postgresClientExample(url: clientURL, schemaFile: Self.schemaFile, api: api, transport: transport)
            #expect(again.notModified)
            let replica = try await PostgresReplica.open(url: clientURL)
            try await withTeardown { () async throws in
                #expect(try await replica.count("Person") == 4)
            } teardown: {
                await replica.close()
            }
        } teardown: {
            try? await transport.shutdown()
            await server.stop()
        }
    }
}
