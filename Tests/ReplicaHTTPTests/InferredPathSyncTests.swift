import Foundation
import Hummingbird
import Replica
import ReplicaHTTP
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// A schema inferred from GitHub's repository at `/repos/octocat/Hello-World` syncs that very path
/// through the real HTTP client: `:owner` ('octocat') is the owner's login, not the integer
/// foreign key `ownerID` that made the sync fail ('octocat' is not an integer).
@Suite("Inferred schemas sync the paths they were inferred from")
struct InferredPathSyncTests {
    static let fixture = GitHubRepositoryFixture.self

    /// GitHub's repository at its path, on a free loopback port.
    static func withRepositoryAPI(_ body: (String) async throws -> Void) async throws {
        let router = Router()
        router.get(.init(fixture.path)) { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: fixture.repository)))
        }
        let server = try await StreamingServer.start(router)
        try await withTeardown {
            try await body("http://127.0.0.1:\(server.port)")
        } teardown: {
            await server.stop()
        }
    }

    static func open(_ kind: String, _ schema: Schema, _ directory: TemporaryDirectory) async throws -> any ReplicaStore {
        if kind == "sqlite" { return try SQLiteReplica(store: Store(path: directory.path("github.sqlite"), schema: schema)) }
        return try await PostgresReplica.open(url: try await PostgresCluster.start().makeDatabase(), schema: schema)
    }

    @Test("inferred from the live path, the schema syncs it into SQLite and PostgreSQL: the repository stored, scoped by the owner's login",
          arguments: ["sqlite", "postgres"])
    func liveInferenceSyncs(kind: String) async throws {
        try await Self.withRepositoryAPI { base in
            let directory = try TemporaryDirectory("replica-infer-path")
            defer { directory.remove() }
            let transport = HTTPTransport()
            let url = try #require(URL(string: base))
            let inferred = try await Schema.infer(name: "github", baseURL: url, paths: [Self.fixture.path],
                                                  routes: [Self.fixture.pattern], transport: transport)
            try await transport.shutdown()
            #expect(inferred.schema.routes.map(\.path) == [Self.fixture.pattern])
            #expect(try inferred.schema.requireEntity("Owner").primaryKey == "login")

            let store = try await Self.open(kind, inferred.schema, directory)
            let clientTransport = HTTPTransport()
            try await withTeardown {
                var configuration = ClientConfiguration(transport: clientTransport, baseURLs: [.production: url])
                configuration.timeout = .seconds(60)
                let client = ReplicaClient(store: store, configuration: configuration)
                let first = try await client.call(Self.fixture.path)
                #expect(first.sync.ignoredKeys.map(\.description) == [])
                let repos = try await store.rows(RowQuery("Repo"))
                #expect(repos.map(\.primaryKey) == [.integer(1296269)])
                #expect(repos.first?["ownerLogin"] == .string("octocat"))
                #expect(repos.first?["fullName"] == .string("octocat/Hello-World"))
                #expect(try await store.rows(RowQuery("Owner")).map(\.primaryKey) == [.string("octocat")])
                #expect(try await client.call(Self.fixture.path).changes.isEmpty)
            } teardown: {
                try? await clientTransport.shutdown()
                await store.close()
            }
        }
    }

    @Test("replica schema infer --route PATTERN --route PATH=FILE: schema check accepts it and replica sync syncs the path; PATTERN=FILE alone makes :ownerPath")
    func command() async throws {
        try await Self.withRepositoryAPI { base in
            let directory = try TemporaryDirectory("replica-infer-path-cli")
            defer { directory.remove() }
            let sample = directory.path("repo.json")
            try Data(Self.fixture.repository.utf8).write(to: URL(fileURLWithPath: sample))
            let cases: [(arguments: [String], route: String)] = [
                (["--route", Self.fixture.pattern, "--route", "\(Self.fixture.path)=\(sample)"],
                 "route GET /repos/:owner/:repo -> Repo (scope: ownerLogin = :owner and repo = :repo)"),
                (["--route", "\(Self.fixture.pattern)=\(sample)"],
                 "route GET /repos/:ownerPath/:repo -> Repo (scope: ownerPath = :ownerPath and repo = :repo)"),
            ]
            for (index, (arguments, route)) in cases.enumerated() {
                let schema = directory.path("github\(index).json")
                let inferred = try await ChildProcess.run(ChildProcess.replica, ["schema", "infer"] + arguments + ["-o", schema])
                #expect(inferred.status == 0, "\(inferred.stderr)")
                #expect(inferred.stderr.split(separator: "\n").last == "wrote \(schema): 4 entities, 1 route", "\(inferred.stderr)")
                #expect(inferred.stderr.contains("note: Repo at repo.json /owner"), "\(inferred.stderr)")

                let checked = try await ChildProcess.run(ChildProcess.replica, ["schema", "check", schema])
                #expect(checked.status == 0, "\(checked.stderr)")
                #expect(checked.stdout.contains(route), "\(checked.stdout)")

                let synced = try await ChildProcess.run(ChildProcess.replica, [
                    "sync", "--db", directory.path("cache\(index).sqlite"), "--schema", schema, "--base-url", base, Self.fixture.path,
                ])
                #expect(synced.status == 0, "\(synced.stderr)")
                #expect(synced.stdout.hasPrefix("\(Self.fixture.path): 200, "), "\(synced.stdout)")
                #expect(synced.stderr == "")
            }
            let unmatched = try await ChildProcess.run(ChildProcess.replica, [
                "schema", "infer", "--route", "/repos/:owner/:repo", "--route", "/users/octocat=\(sample)",
            ])
            #expect(unmatched.status == 0, "\(unmatched.stderr)")
            #expect(unmatched.stdout.contains(#""path": "/users/octocat""#), "\(unmatched.stdout)")
        }
    }
}
