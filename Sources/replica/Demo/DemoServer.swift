import Foundation
import Replica
import ReplicaServer

/// The demo's API: the blog's resources (`/users`, `/users/:id/posts`, `/posts/:id/comments`, …)
/// on the embedded mock server, posts wrapped in their namespace (`{"posts": [...]}`), plus `GET /bootstrap` (every user in one MANY-shaped object) and
/// `GET /stats` (counts, for the DATA route).
enum DemoServer {
    /// Starts the server on a free loopback port with `data` loaded into a SQLite mock store at
    /// `storePath` (replaced), and latency between `latency` and twice that.
    static func start(schema: Schema, data: DemoData, latency: Duration, storePath: String) async throws -> MockServer {
        let blog = MockResource.resources(for: schema)
        let extra = [MockResource("bootstrap", properties: [], actions: .index),
                     MockResource("stats", properties: [], actions: .index)]
        let conditions = MockConditions(latency: latency == .zero ? nil : latency ... latency * 2)
        let server = try await MockServer.start(resources: blog + extra,
                                                options: MockServerOptions(host: "127.0.0.1", port: 0,
                                                                           store: try SQLiteMockStore(path: storePath),
                                                                           conditions: conditions))
        do {
            let resources = Dictionary(blog.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            server.setController(BootstrapController(users: resources["users"]), for: "bootstrap")
            server.setController(StatsController(resources: blog), for: "stats")
            // Entities with a JSON namespace (`post`) are served wrapped in it, as the schema expects.
            for entity in schema.entities {
                guard let namespace = entity.namespace else { continue }
                let collection = entity.collectionNamespace ?? namespace
                server.setSerializer(ReshapingSerializer(objectEnvelope: [namespace], collectionEnvelope: [collection]),
                                     for: entity.tableName)
            }
            let loaded = try await server.load(json: data.json)
            guard loaded.rejected == 0 else {
                throw CLIError("the mock server rejected \(loaded.rejected) of the demo's generated objects: "
                               + loaded.rejections.prefix(3).joined(separator: "; "))
            }
            return server
        } catch {
            await server.stop()
            throw error
        }
    }

    /// `GET /bootstrap`: `{"users": [...]}`, the shape of a MANY route.
    struct BootstrapController: MockController {
        let users: MockResource?

        func index(_ request: MockRequest) async throws -> MockResponse {
            guard let users else { return .json(.object([:])) }
            let page = try await request.store.objects(users, query: MockQuery(sort: [MockQuery.SortKey(property: "user_id")]))
            return .json(.object(["users": .array(page.objects.map { .object(users.nested($0)) })]))
        }
    }

    /// `GET /stats`: the number of objects of each resource, for a DATA route.
    struct StatsController: MockController {
        let resources: [MockResource]

        func index(_ request: MockRequest) async throws -> MockResponse {
            var counts = JSONObject()
            for resource in resources {
                counts[resource.name] = .int(Int64(try await request.store.count(resource, query: MockQuery())))
            }
            return .json(.object(counts))
        }
    }
}
