import Foundation
import NIOConcurrencyHelpers
import ReplicaServer
import ReplicaTestSupport
import Testing

/// The mock server loads its data before its port opens (issue 58, item 6): a client connecting as soon
/// as it can, in Swift (`MockServerOptions.seeds`) and through `replica serve --data`, finds every object,
/// never an empty or partial collection.
@Suite("MockServer: data loaded before listening", .serialized)
struct MockServerSeedTests {
    static let people = 40_000

    /// `{"people": [{"name": "p1", "numberOfKids": 1}, …]}`, `count` objects, written to `url`.
    static func writePeople(_ count: Int, to url: URL) throws {
        var text = #"{"people": ["#
        text.reserveCapacity(count * 40)
        for n in 1...count {
            if n > 1 { text += "," }
            text += #"{"name": "p\#(n)", "numberOfKids": \#(n % 5)}"#
        }
        text += "]}"
        try Data(text.utf8).write(to: url)
    }

    /// Connects to `port` as often as it can until a connection is accepted, then asks `GET /people?_limit=1`
    /// on it; gives up (nil) when `gaveUp` says the server will not listen, or after `limit`.
    static func firstAnswer(port: Int, limit: Duration = .seconds(120), gaveUp: @escaping @Sendable () -> Bool) async -> RawReply? {
        await onThread {
            let deadline = ContinuousClock.now + limit
            while ContinuousClock.now < deadline {
                guard let socket = try? RawSocket(port: port) else {
                    if gaveUp() { return nil }
                    // Refused at once while nothing listens: knock again every millisecond or so, leaving
                    // the cores to the loading server.
                    Thread.sleep(forTimeInterval: 0.001)
                    continue
                }
                socket.send(Array("GET /people?_limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
                return RawReply(socket.readToEnd(limit: .seconds(60)).bytes)
            }
            return nil
        }
    }

    @Test("MockServer.start with seeds listens only once they are loaded: the first connection sees every object",
          arguments: ["memory", "sqlite", "postgres"])
    func seedsBeforeListening(kind: String) async throws {
        let directory = try TemporaryDirectory("replica-server-seed")
        defer { directory.remove() }
        let data = directory.url("people.json")
        // PostgreSQL stores an object a round trip: fewer of them still take a while to load.
        let count = kind == "postgres" ? 5_000 : Self.people
        try Self.writePeople(count, to: data)
        let resources = try Fixture.peopleResources
        // A fixed port, so that this test can knock on it while the server starts (outside the kernel's
        // ephemeral range; another on a clash).
        for _ in 0..<10 {
            let port = Int.random(in: 20_000..<30_000)
            var options = MockServerOptions(port: port, store: try await Fixture.store(kind))
            options.seeds = [.file(data.path)]
            let outcome = NIOLockedValueBox<Result<MockServer, any Error>?>(nil)
            let task = Task { () -> MockServer in
                do {
                    let server = try await MockServer.start(resources: resources, options: options)
                    outcome.withLockedValue { $0 = .success(server) }
                    return server
                } catch {
                    outcome.withLockedValue { $0 = .failure(error) }
                    throw error
                }
            }
            let reply = await Self.firstAnswer(port: port) {
                if case .failure? = outcome.withLockedValue({ $0 }) { return true }
                return false
            }
            guard let server = try? await task.value else { continue }  // the port was taken: another
            #expect(server.seedResult.loaded == count)
            #expect(reply?.status == 200)
            #expect(reply?.header("x-total-count") == String(count), "the first answer: \(reply.map { $0.headLines } ?? [])")
            #expect(reply?.json?[0]?["name"] == "p1")
            await server.stop()
            return
        }
        Issue.record("no free port in 10 tries")
    }

    @Test("replica serve --data FILE --store sqlite: opens its port only once the data is loaded, then says it listens")
    func serveDataBeforeListening() async throws {
        let directory = try TemporaryDirectory("replica-server-seed")
        defer { directory.remove() }
        let data = directory.url("people.json")
        try Self.writePeople(Self.people, to: data)
        for attempt in 0..<10 {
            let port = Int.random(in: 20_000..<30_000)
            let server = try ServeProcess(["--schema", "Schemas/people.json", "--port", String(port), "--data", data.path,
                                           "--store", "sqlite:\(directory.path("serve-\(attempt).sqlite"))"])
            let process = server.process
            let reply = await Self.firstAnswer(port: port) { !process.isRunning }
            guard let reply else {
                _ = await server.stop(SIGINT)
                continue  // the port was taken: another
            }
            #expect(reply.status == 200)
            #expect(reply.header("x-total-count") == String(Self.people), "the first answer: \(reply.headLines)")
            #expect(try await server.firstLine() == "Listening on http://127.0.0.1:\(port)")
            #expect(await server.stop(SIGINT) == 0)
            #expect(server.standardError.contains("loaded \(Self.people) objects, rejected 0"), "\(server.standardError)")
            return
        }
        Issue.record("no free port in 10 tries")
    }
}
