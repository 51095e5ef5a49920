import Foundation
import Replica
import ReplicaPostgres
import ReplicaServer
import ReplicaTestSupport
import Testing

/// The built `replica` executable against a PostgreSQL replica, in processes of their own.
@Suite("replica --db postgres://")
struct PostgresCLITests {
    static let replica: String = {
        var candidates: [URL] = []
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent())
        }
        candidates.append(packageRoot.appendingPathComponent(".build/debug"))
        let directory = candidates.first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("replica").path) }
            ?? packageRoot.appendingPathComponent(".build/debug")
        return directory.appendingPathComponent("replica").path
    }()

    /// Runs `replica` on a thread of its own; its output and whether it exited with 0.
    static func run(_ arguments: [String]) async -> (ok: Bool, output: String) {
        await withCheckedContinuation { continuation in
            Thread {
                do {
                    continuation.resume(returning: (true, try PostgresCluster.run(replica, arguments)))
                } catch {
                    // What the tool printed, without the command line the error starts with.
                    let text = "\(error)"
                    let printed = text.range(of: " failed: ").map { String(text[$0.upperBound...]) } ?? text
                    continuation.resume(returning: (false, printed))
                }
            }.start()
        }
    }

    @Test("replica import in another process is seen by this one's observer; replica query reads it")
    func importAndQuery() async throws {
        let url = try await PostgresCluster.start().makeDatabase()
        let schemaPath = packageRoot.appendingPathComponent("Schemas/people.json").path
        let watcher = try await PostgresReplica.open(url: url, schema: try TestStore.schema())
        try await withTeardown {
            var changes = await watcher.changes(for: ["Person"]).makeAsyncIterator()
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("people-\(UUID().uuidString).json")
            try peopleJSON([(1, "Ann", 2), (2, "Bob", 0), (3, "Cy", 5)]).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let password = url.replacingOccurrences(of: "postgres@", with: "postgres:hunter2@")

            let imported = await Self.run(["import", "--db", password, "--schema", schemaPath, "--entity", "Person", file.path])
            #expect(imported.ok, "\(imported.output)")
            #expect(imported.output.hasPrefix("inserted 3, updated 0, deleted 0, skipped 0 (3 objects, "))
            let seen = try #require(await changes.next())
            #expect(seen["Person"]?.inserted.integers == [1, 2, 3])

            let again = await Self.run(["import", "--db", url, "--entity", "Person", file.path])
            #expect(again.output.hasPrefix("inserted 0, updated 0, deleted 0, skipped 0 (3 objects, "))

            let query = await Self.run(["query", "--db", url, "Person", "--where", "numberOfKids > ?", "--arg", "1",
                                        "--sort", "-name", "--format", "ndjson"])
            #expect(query.output == """
                {"id":3,"name":"Cy","numberOfKids":5,"kilometersWalked":null,"avatar":null}
                {"id":1,"name":"Ann","numberOfKids":2,"kilometersWalked":null,"avatar":null}

                """)

            let refused = await Self.run(["query", "--db", "postgres://app:hunter2@127.0.0.1:\(try PostgresCluster.freePort())/x", "Person"])
            #expect(!refused.ok)
            #expect(refused.output.contains("Error: postgres://app@127.0.0.1:"))
            #expect(refused.output.contains("connection refused"))
            #expect(!refused.output.contains("hunter2"))
        } teardown: {
            await watcher.close()
        }
    }
}

extension PostgresCLITests {
    @Test("replica sync --db postgres:// syncs a paged API; a second run answers 304 from the records the first wrote")
    func syncIntoPostgres() async throws {
        let url = try await PostgresCluster.start().makeDatabase()
        let schemaPath = packageRoot.appendingPathComponent("Schemas/people.json").path
        let server = try await MockServer.start(resources: MockResource.resources(for: try TestStore.schema()))
        try await withTeardown {
            _ = try await server.load(json: try JSONValue(parsing: #"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}, {"id": 3, "name": "cy"}]"#),
                                      into: "people")
            let path = "/people?_sort=id&_page=1&_limit=2"

            let first = await Self.run(["sync", "--db", url, "--schema", schemaPath, "--base-url", server.baseURL, path])
            #expect(first.ok, "\(first.output)")
            #expect(first.output == "\(path): 200, inserted 3, updated 0, deleted 0 (3 objects, 2 pages)\n")
            let again = await Self.run(["sync", "--db", url, "--base-url", server.baseURL, path])
            #expect(again.output == "\(path): 304 not modified\n")

            let replica = try await PostgresReplica.open(url: url)
            try await withTeardown {
                #expect(try await replica.rows(RowQuery("Person", sort: [.ascending("id")])).map { $0["name"] }
                        == [.string("ann"), .string("bob"), .string("cy")])

                // A failing page: the tool says which request failed, exits 1, and the replica is unchanged.
                _ = try await server.load(json: try JSONValue(parsing: #"[{"id": 4, "name": "dee"}]"#), into: "people")
                server.setConditions(MockConditions(faults: [MockFault(.status(500), method: "GET", path: "/people", query: ["_page": "2"])]))
                let failed = await Self.run(["sync", "--db", url, "--base-url", server.baseURL, path])
                #expect(!failed.ok)
                #expect(failed.output.contains("\(path): GET \(server.baseURL)/people?_sort=id&_page=2&_limit=2: HTTP 500"),
                        "\(failed.output)")
                #expect(try await replica.count("Person") == 3)
            } teardown: {
                await replica.close()
            }
        } teardown: {
            await server.stop()
        }
    }

    @Test("replica demo --db postgres:// syncs the blog into PostgreSQL and keeps the watched scope in sync")
    func demoOnPostgres() async throws {
        let url = try await PostgresCluster.start().makeDatabase()
        let demo = await Self.run(["demo", "--db", url, "--users", "40", "--latency", "1", "--duration", "1"])
        #expect(demo.ok, "\(demo.output)")
        #expect(demo.output.contains("  GET /bootstrap (MANY): 40 objects, 40 rows inserted, in "), "\(demo.output)")
        #expect(demo.output.contains(" into \(url)\n"), "\(demo.output)")
        #expect(demo.output.contains(" in the replica (in sync)\n"), "\(demo.output)")
        // A second run empties the blog's tables first: the same rows are inserted again.
        let rerun = await Self.run(["demo", "--db", url, "--users", "40", "--latency", "1", "--duration", "1"])
        #expect(rerun.output.contains("  GET /bootstrap (MANY): 40 objects, 40 rows inserted, in "), "\(rerun.output)")
        let replica = try await PostgresReplica.open(url: url)
        try await withTeardown { () async throws in
            #expect(try await replica.count("User") == 40)
        } teardown: {
            await replica.close()
        }
    }
}

extension PostgresCLITests {
    /// Waits until `file` holds at least `lines` lines (up to 30 s); its text.
    static func lines(of file: String, atLeast lines: Int) async throws -> String {
        for _ in 0..<600 {
            let text = (FileManager.default.contents(atPath: file)).map { String(decoding: $0, as: UTF8.self) } ?? ""
            if text.filter({ $0 == "\n" }).count >= lines { return text }
            try await Task.sleep(for: .milliseconds(50))
        }
        return (FileManager.default.contents(atPath: file)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    @Test("replica watch on PostgreSQL prints the diff of an import made by another process")
    func watchSeesImport() async throws {
        let url = try await PostgresCluster.start().makeDatabase()
        let schemaPath = packageRoot.appendingPathComponent("Schemas/people.json").path
        let directory = try TemporaryDirectory("replica-watch")
        defer { directory.remove() }
        let empty = directory.url("empty.json")
        try Data("[]".utf8).write(to: empty)
        let created = await Self.run(["import", "--db", url, "--schema", schemaPath, "--entity", "Person", empty.path])
        #expect(created.ok, "\(created.output)")
        let output = directory.path("watch.out")
        let file = directory.url("people.json")
        try peopleJSON([(1, "Ann", 2), (2, "Bob", 0), (3, "Cy", 5)]).write(to: file)

        let watch = try PostgresCluster.spawn([Self.replica, "watch", "--db", url, "Person", "--where", "numberOfKids > 0",
                                               "--sort", "name", "--duration", "60"], outputFile: output)
        defer {
            kill(watch, SIGTERM)
            PostgresCluster.wait(watch)
        }
        // The first line is printed once the view listens and has read its first snapshot.
        let first = try await Self.lines(of: output, atLeast: 1)
        #expect(first == #"{"event":"snapshot","count":0,"keys":[]}"# + "\n")
        let imported = await Self.run(["import", "--db", url, "--entity", "Person", file.path])
        #expect(imported.ok, "\(imported.output)")
        let text = try await Self.lines(of: output, atLeast: 2)
        #expect(text == #"{"event":"snapshot","count":0,"keys":[]}"# + "\n"
                + #"{"event":"diff","count":2,"inserted":[1,3],"updated":[],"moved":[],"deleted":[]}"# + "\n")
    }
}
