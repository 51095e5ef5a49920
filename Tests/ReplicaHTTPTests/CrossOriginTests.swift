import AsyncHTTPClient
import Foundation
import ReplicaHTTP
import ReplicaTestSupport
import Testing

/// Credentials stay with their origin: a next page link or a redirect to another origin (another
/// port of 127.0.0.1) is refused, naming both origins, unless allowed, and then carries none of
/// the configured headers; redirect loops fail at once, naming the chain.
@Suite("Hostile server: next links and redirects to other origins, redirect loops", .timeLimit(.minutes(3)))
struct CrossOriginTests {
    static let credentials = ["authorization", "x-api-key", "x-token", "cookie"]

    /// Syncs the seed (ids 1 and 2), then runs `body` with the client and the rows the seed left.
    static func seeded(_ configure: @escaping (inout ClientConfiguration) -> Void = { _ in },
                       _ body: (HostileAPI, ReplicaClient, [EntityRow]) async throws -> Void) async throws {
        let api = try await HostileAPI.start()
        try await withTeardown {
            let client = try api.client(configure)
            _ = try await client.call("/people?mode=seed")
            let before = try api.people()
            #expect(before.count == 2)
            try await body(api, client, before)
        } teardown: {
            await api.stop()
        }
    }

    @Test("a Link next to another origin fails naming both origins; the other host sees nothing; the store is unchanged")
    func crossOriginNextRefused() async throws {
        try await Self.seeded { api, client, before async throws in
            let error = await #expect(throws: ClientError.self) { try await client.call("/people?mode=cross") }
            #expect(error?.code == .crossOrigin)
            let text = error.map(String.init(describing:)) ?? ""
            #expect(text.contains("http://127.0.0.1:\(api.home.port)"), "\(text)")
            #expect(text.contains("http://127.0.0.1:\(api.other.port)"), "\(text)")
            #expect(text.contains("--allow-host"), "\(text)")
            #expect(api.otherLog.seen.isEmpty)
            #expect(try api.people() == before)
        }
    }

    @Test("an allowed host's next page is synced, without any configured header; the home pages keep them")
    func crossOriginNextAllowed() async throws {
        let api = try await HostileAPI.start()
        try await withTeardown {
            let client = try api.client { $0.allowedHosts = ["127.0.0.1:\(api.other.port)"] }
            let result = try await client.call("/people?mode=cross")
            #expect(result.pages == 2)
            #expect(try api.people().map(\.primaryKey) == [.integer(3), .integer(4)])
            let seen = try #require(api.otherLog.seen.first)
            for name in Self.credentials { #expect(seen.headers[name] == nil, "\(name) went to the other host") }
            #expect(seen.headers["user-agent"] != nil)
            let home = try #require(api.homeLog.seen.first)
            #expect(home.headers["authorization"] == "Bearer secret" && home.headers["x-api-key"] == "key" && home.headers["x-token"] == "token")
        } teardown: {
            await api.stop()
        }
    }

    @Test("a redirect to another origin fails naming both; allowed, it goes there without the configured headers")
    func crossOriginRedirect() async throws {
        try await Self.seeded { api, client, before async throws in
            let error = await #expect(throws: ClientError.self) { try await client.call("/people?mode=redirect-cross") }
            #expect(error?.code == .crossOrigin)
            let text = error.map(String.init(describing:)) ?? ""
            #expect(text.contains("redirect") && text.contains(":\(api.home.port)") && text.contains(":\(api.other.port)"), "\(text)")
            #expect(api.otherLog.seen.isEmpty)
            #expect(try api.people() == before)
        }
        try await Self.seeded({ $0.allowedHosts = ["127.0.0.1"] }) { api, client, _ async throws in
            _ = try await client.call("/people?mode=redirect-cross")
            let seen = try #require(api.otherLog.seen.first)
            for name in Self.credentials { #expect(seen.headers[name] == nil, "\(name) went to the other host") }
            #expect(try api.people().map(\.primaryKey) == [.integer(4)])
        }
    }

    @Test("a redirect on the same origin keeps the headers")
    func sameOriginRedirect() async throws {
        try await Self.seeded { api, client, _ async throws in
            _ = try await client.call("/people?mode=redirect-same")
            let last = try #require(api.homeLog.seen.last)
            #expect(last.path.contains("mode=seed"))
            #expect(last.headers["authorization"] == "Bearer secret" && last.headers["x-api-key"] == "key")
        }
    }

    @Test("a redirect loop fails at once as a loop naming its chain; an endless chain as too many redirects")
    func redirectLoops() async throws {
        try await Self.seeded { api, client, before async throws in
            let clock = ContinuousClock()
            let start = clock.now
            let loop = await #expect(throws: ClientError.self) { try await client.call("/people?mode=loop") }
            #expect(loop?.code == .redirect)
            let text = loop.map(String.init(describing:)) ?? ""
            #expect(text.contains("redirect loop") && text.contains("mode=loop&n=2 → "), "\(text)")
            let chain = await #expect(throws: ClientError.self) { try await client.call("/people?mode=chain") }
            #expect(chain?.code == .redirect)
            #expect(chain.map(String.init(describing:))?.contains("too many redirects (more than 10") == true)
            // Far inside the 60 s head timeout the old client reported after.
            #expect(start.duration(to: clock.now) < .seconds(30))
            #expect(try api.people() == before)
        }
    }

    @Test("replica schema infer --header does not follow a next link to another origin")
    func schemaInfer() async throws {
        let api = try await HostileAPI.start()
        try await withTeardown {
            let output = try await ChildProcess.run(ChildProcess.replica, [
                "schema", "infer", "--base-url", "http://127.0.0.1:\(api.home.port)", "--header", "Authorization: Bearer secret",
                "-o", api.directory.path("inferred.json"), "/people?mode=cross",
            ])
            #expect(output.status == 1)
            #expect(output.stderr.contains("http://127.0.0.1:\(api.other.port)"), "\(output.stderr)")
            #expect(api.otherLog.seen.isEmpty)
        } teardown: {
            await api.stop()
        }
    }

    @Test("an HTTPClient of the user's that follows redirects itself reports its loop at once, not as a timeout")
    func userClientLoop() async throws {
        let api = try await HostileAPI.start()
        let client = HTTPClient(eventLoopGroupProvider: .singleton,
                                configuration: HTTPClient.Configuration(redirectConfiguration: .follow(max: 5, allowCycles: false)))
        try await withTeardown {
            let transport = HTTPTransport(client: client)
            let url = try #require(URL(string: "http://127.0.0.1:\(api.home.port)/people?mode=loop"))
            let clock = ContinuousClock()
            let start = clock.now
            let error = await #expect(throws: ClientError.self) {
                _ = try await transport.send(ClientRequest(method: .get, url: url, timeout: .seconds(60)))
            }
            #expect(error?.code == .redirect)
            #expect(error.map(String.init(describing:))?.contains("redirect loop") == true)
            #expect(start.duration(to: clock.now) < .seconds(30))
        } teardown: {
            try? await client.shutdown()
            await api.stop()
        }
    }

    @Test("replica sync --header refuses the other origin's link (exit 1, both origins named); --allow-host follows it without the headers")
    func syncCommand() async throws {
        let api = try await HostileAPI.start()
        try await withTeardown {
            let db = api.directory.path("cli.sqlite")
            let schema = packageRoot.appendingPathComponent("Schemas/people.json").path
            let base = ["sync", "--db", db, "--schema", schema, "--base-url", "http://127.0.0.1:\(api.home.port)",
                        "--header", "Authorization: Bearer secret", "--header", "X-Api-Key: key"]
            let refused = try await ChildProcess.run(ChildProcess.replica, base + ["/people?mode=cross"])
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("http://127.0.0.1:\(api.other.port)") && refused.stderr.contains("http://127.0.0.1:\(api.home.port)"),
                    "\(refused.stderr)")
            #expect(api.otherLog.seen.isEmpty)
            let allowed = try await ChildProcess.run(ChildProcess.replica,
                                                     base + ["--allow-host", "127.0.0.1:\(api.other.port)", "/people?mode=cross"])
            #expect(allowed.status == 0, "\(allowed.stderr)")
            #expect(allowed.stdout.contains("inserted 2"), "\(allowed.stdout)")
            let seen = try #require(api.otherLog.seen.first)
            for name in Self.credentials { #expect(seen.headers[name] == nil, "\(name) went to the other host") }
        } teardown: {
            await api.stop()
        }
    }
}
