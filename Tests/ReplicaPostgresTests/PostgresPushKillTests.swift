import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaCore
import ReplicaTestSupport
import Testing

/// `replica push --db postgres://` killed with SIGKILL at seeded random moments and run again, against
/// an in-process mock API with latency: each write reaches the API exactly once.
@Suite("replica push --db postgres://, killed with SIGKILL and run again")
struct PostgresPushKillTests {
    /// Runs `replica push`, kills it with SIGKILL after `delay` seconds; `true` when it was still running then.
    static func pushKilled(after delay: TimeInterval, db: String, baseURL: String) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: PostgresCLITests.replica)
                process.arguments = ["push", "--db", db, "--base-url", baseURL, "--concurrency", "2", "--retries", "0"]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                guard (try? process.run()) != nil else {
                    continuation.resume(returning: false)
                    return
                }
                let deadline = Date().addingTimeInterval(delay)
                while process.isRunning && Date() < deadline { usleep(2_000) }
                let running = process.isRunning
                if running { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
                continuation.resume(returning: running)
            }.start()
        }
    }

    @Test("rounds of 2 creates and an update, pushes killed at seeded random moments (20 times): each write lands once")
    func killedPushes() async throws {
        let url = try await PostgresCluster.start().makeDatabase()
        let schemaPath = packageRoot.appendingPathComponent("Schemas/people.json").path
        let schema = try Schema(contentsOf: URL(fileURLWithPath: schemaPath))
        var options = MockServerOptions(port: 0)
        options.conditions.latency = .milliseconds(20) ... .milliseconds(50)
        let server = try await MockServer.start(resources: MockResource.resources(for: schema), options: options)
        let transport = HTTPTransport()
        try await withTeardown {
            _ = try await server.load(json: try JSONValue(parsing: #"[{"id": 1, "name": "Ann", "numberOfKids": 0}]"#), into: "people")
            let first = await PostgresCLITests.run(["sync", "--db", url, "--schema", schemaPath, "--base-url", server.baseURL, "/people"])
            #expect(first.ok, "\(first.output)")

            var random = SeededRandom(seed: 20_260_523)
            var kills = 0
            var round = 0
            var names: [String] = []
            while kills < 20 && round < 50 {
                round += 1
                for index in 1...2 {
                    let name = "round \(round) person \(index)"
                    names.append(name)
                    let saved = await PostgresCLITests.run(["save", "--db", url, "Person", #"{"name": "\#(name)", "numberOfKids": \#(index)}"#])
                    #expect(saved.ok, "\(saved.output)")
                }
                let kids = await PostgresCLITests.run(["save", "--db", url, "Person", #"{"id": 1, "numberOfKids": \#(round)}"#])
                #expect(kids.ok, "\(kids.output)")
                if await Self.pushKilled(after: Double.random(in: 0.05...0.6, using: &random), db: url, baseURL: server.baseURL) {
                    kills += 1
                }
            }
            #expect(kills >= 20, "only \(kills) of \(round) pushes were still running when killed")

            let last = await PostgresCLITests.run(["push", "--db", url, "--base-url", server.baseURL])
            #expect(last.ok, "\(last.output)")
            let outbox = await PostgresCLITests.run(["outbox", "--db", url])
            #expect(outbox.output.hasSuffix("(0 mutations)\n"), "\(outbox.output)")

            // The API's people, read with a store of their own: Ann with the last round's kids, each new person once.
            let reader = try SQLiteReplica(store: Store.inMemory(schema: schema))
            let configuration = ClientConfiguration(transport: transport, baseURLs: [.production: try #require(URL(string: server.baseURL))])
            _ = try await ReplicaClient(store: reader, configuration: configuration).call("/people")
            let remote = try await reader.rows(RowQuery("Person", sort: [.ascending("id")]))
                .map { "\($0["id"] ?? .null) \($0["name"] ?? .null) \($0["numberOfKids"] ?? .null)" }
            let expected = ["Ann \(round)"] + names.map { "\($0) \($0.suffix(1))" }
            #expect(remote.map { $0.split(separator: " ", maxSplits: 1).last.map(String.init) ?? "" }.sorted() == expected.sorted())
            #expect(remote.count == 1 + 2 * round)
            let local = await PostgresCLITests.run(["query", "--db", url, "Person", "--sort", "id", "--format", "ndjson"])
            let localRows = local.output.split(separator: "\n").count
            #expect(localRows == remote.count)
            #expect(!local.output.contains(#"{"id":-"#), "a temporary key is left: \(local.output)")
        } teardown: {
            try? await transport.shutdown()
            await server.stop()
        }
    }
}
