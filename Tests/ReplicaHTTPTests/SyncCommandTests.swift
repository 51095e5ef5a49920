import AsyncHTTPClient
import Foundation
import Hummingbird
import NIOCore
import Replica
import ReplicaHTTP
import ReplicaTestSupport
import Testing

@Suite("replica sync against replica serve")
struct SyncCommandTests {
    @Test("fills a store whose rows equal the server's data")
    func syncEqualsServer() async throws {
        let directory = try TemporaryDirectory("replica-sync")
        defer { directory.remove() }
        let data = directory.url("data.json")
        try Data("""
            {"people": [{"name": "john", "numberOfKids": 1}, {"name": "ann", "numberOfKids": 2, "kilometersWalked": 3.5}],
             "cars": [{"name": "beetle", "color": "red", "person_id": 1}, {"name": "mini", "color": "blue", "person_id": 2}]}
            """.utf8).write(to: data)
        let schema = packageRoot.appendingPathComponent("Schemas/people.json").path
        let (serve, line) = try await Self.serve(schema: schema, data: data)
        defer { if serve.isRunning { serve.interrupt() }; serve.waitUntilExit() }
        #expect(line.hasPrefix("Listening on http://127.0.0.1:"))
        let base = String(line.dropFirst("Listening on ".count))

        let db = directory.path("people.sqlite")
        let output = try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", db, "--schema", schema, "--base-url", base,
                                                                 "/people", "/cars"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout == """
            /people: 200, inserted 2, updated 0, deleted 0 (2 objects)
            /cars: 200, inserted 2, updated 0, deleted 0 (2 objects)

            """)
        let again = try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", db, "--base-url", base, "/people"])
        #expect(again.stdout == "/people: 304 not modified\n")

        // The store's rows equal what the server serves.
        let store = try Store(path: db)
        for (path, entity) in [("/people", "Person"), ("/cars", "Car")] {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + path), timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 1 << 20)
            let served = try JSONValue(parsing: Array(buffer: body))
            let map = try SQLiteReplica(store: store).mapping.requireMap(entity)
            let stored = try store.rows(entity).map { JSONValue.object(map.encode($0)) }
            #expect(stored == served.arrayValue, "\(entity)")
        }
    }

    /// Starts `replica serve --schema SCHEMA --data DATA --port 0`; returns the process (the caller
    /// stops it) and the first line it printed (`Listening on http://127.0.0.1:PORT`).
    static func serve(schema: String, data: URL) async throws -> (Process, String) {
        let serve = Process()
        serve.executableURL = URL(fileURLWithPath: ChildProcess.replica)
        serve.arguments = ["serve", "--schema", schema, "--data", data.path, "--port", "0"]
        let out = Pipe()
        serve.standardOutput = out
        serve.standardError = FileHandle.nullDevice
        try serve.run()
        guard let line = await firstLine(out.fileHandleForReading) else {
            if serve.isRunning { serve.interrupt() }
            serve.waitUntilExit()
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "replica serve printed nothing"])
        }
        return (serve, line)
    }

    /// The first line `handle` gives (without its newline), read on a thread of its own: a child
    /// that starts slowly on a loaded machine must not hold one of Swift's two cooperative threads.
    static func firstLine(_ handle: FileHandle) async -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: readFirstLine(handle)) }
        }
    }

    private static func readFirstLine(_ handle: FileHandle) -> String? {
        var bytes: [UInt8] = []
        while let chunk = try? handle.read(upToCount: 1), let byte = chunk.first {
            if byte == 10 { break }
            bytes.append(byte)
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }
}

@Suite("replica sync: keys that are not stored")
struct SyncCommandKeyWarningTests {
    @Test("warns with the keys a response gave that no attribute takes; --strict fails and writes nothing")
    func keyWarnings() async throws {
        let router = Router()
        router.get("/people") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string:
                #"[{"id": 1, "name": "ann", "shoeSize": 38}, {"id": 2, "name": "bob", "shoeSize": 44, "name": "rob"}]"#)))
        }
        let server = try await StreamingServer.start(router)
        try await withTeardown {
            let directory = try TemporaryDirectory("replica-sync")
            defer { directory.remove() }
            let schema = packageRoot.appendingPathComponent("Schemas/people.json").path
        let base = "http://127.0.0.1:\(server.port)"
            let db = directory.path("people.sqlite")
        let output = try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", db, "--schema", schema, "--base-url", base, "/people"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout == "/people: 200, inserted 2, updated 0, deleted 0 (2 objects)\n")
        #expect(output.stderr == """
            warning: GET \(base)/people: Person: 2 keys matched no attribute and were not stored: shoeSize × 2 (first at /0/shoeSize)
            warning: GET \(base)/people: objects gave keys twice; the last value was stored: duplicate Person.name × 1 (first at /1/name)
            warning: --strict makes these errors (nothing is written)

            """)
            let strictDB = directory.path("strict.sqlite")
        let strict = try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", strictDB, "--schema", schema, "--base-url", base,
                                                                 "--strict", "/people"])
        #expect(strict.status == 1)
        #expect(strict.stderr == "Error: /people: GET \(base)/people: 2 keys matched no attribute or entity: Person: shoeSize × 2 "
                + "(first at /0/shoeSize); keys given twice in one object: Person: name × 1 (first at /1/name) (strict: nothing was written)\n",
                "\(strict.stderr)")
        // No sync committed: the file this run created is not left behind.
        #expect(!FileManager.default.fileExists(atPath: strictDB))
        } teardown: {
            await server.stop()
        }
    }
}
