import Foundation
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("NDJSON import")
struct NDJSONImportTests {
    /// Three users on lines 1, 3 and 4 (line 2 blank, line 4 ends with CRLF, no line feed at the end).
    static let users = #"{"user_id": 1, "name": "Ann"}"# + "\n"
        + "  \n"
        + #"{"user_id": 2, "name": "Bob", "posts": [{"id": 10, "title": "Hi"}]}"# + "\r\n"
        + #" {"user_id": 3, "name": "Cleo"} "#

    static func ndjson(chunkSize: Int = 1 << 16) -> SyncOptions {
        var options = SyncOptions(chunkSize: chunkSize)
        options.format = .ndjson
        return options
    }

    @Test("NDJSON reads as the array of its lines, whatever the chunking", arguments: [1, 2, 7, 30, 64, 1 << 16])
    func linesAsArray(chunkSize: Int) async throws {
        let lines = try BlogFixture()
        let result = try await lines.engine.importChunks(Chunked(bytes: Array(Self.users.utf8), size: chunkSize),
                                                         into: .entity("User"), options: Self.ndjson(chunkSize: chunkSize))
        #expect(result.changes["User"]?.inserted.ints == [1, 2, 3])
        #expect(result.changes["Post"]?.inserted.ints == [10])
        #expect(result.objectCount == 4)
        #expect(result.byteCount == Int64(Self.users.utf8.count))
        let array = try BlogFixture()
        _ = try await array.engine.importChunks(Chunked(bytes: Array(#"""
            [{"user_id": 1, "name": "Ann"}, {"user_id": 2, "name": "Bob", "posts": [{"id": 10, "title": "Hi"}]},
             {"user_id": 3, "name": "Cleo"}]
            """#.utf8), size: 64), into: .entity("User"))
        #expect(try lines.store.rows("User") == (try array.store.rows("User")))
        #expect(try lines.store.rows("Post") == (try array.store.rows("Post")))
    }

    @Test("importFile goes by the file's name: .ndjson and .jsonl are NDJSON, SyncOptions.format overrides")
    func detectionByName() async throws {
        #expect(InputFormat(path: "a/b/events.ndjson") == .ndjson)
        #expect(InputFormat(path: "events.JSONL") == .ndjson)
        #expect(InputFormat(path: "events.json") == .json)
        #expect(InputFormat(path: "ndjson") == .json)
        #expect(InputFormat(path: "-") == .json)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for name in ["users.ndjson", "users.jsonl"] {
            try Data(Self.users.utf8).write(to: directory.url(name))
            let blog = try BlogFixture()
            let result = try await blog.engine.importFile(directory.path(name), into: .entity("User"))
            #expect(result.changes["User"]?.inserted.ints == [1, 2, 3])
            let dry = try await blog.engine.validateFile(directory.path(name), into: .entity("User"))
            #expect(dry.objectCount == 4)
        }
        try Data(Self.users.utf8).write(to: directory.url("users.txt"))
        let blog = try BlogFixture()
        let asJSON = await #expect(throws: SyncError.self) {
            try await blog.engine.importFile(directory.path("users.txt"), into: .entity("User"))
        }
        #expect(asJSON?.description == "\(directory.path("users.txt")): byte 33 (line 3, column 1): "
                + "unexpected '{' after the top-level value: expected end of input")
        var options = SyncOptions()
        options.format = .ndjson
        let forced = try await blog.engine.importFile(directory.path("users.txt"), into: .entity("User"), options: options)
        #expect(forced.changes["User"]?.inserted.ints == [1, 2, 3])
    }

    @Test("a malformed line names its line, column and byte offset, and nothing is written", arguments: [1, 5, 1 << 16])
    func malformedLine(chunkSize: Int) async throws {
        let text = #"{"user_id": 1, "name": "Ann"}"# + "\n" + #"{"user_id": 2, "name": "Bob",}"# + "\n"
        let blog = try BlogFixture()
        let error = await #expect(throws: SyncError.self) {
            try await blog.engine.importChunks(Chunked(bytes: Array(text.utf8), size: chunkSize), into: .entity("User"),
                                               source: "users.ndjson", options: Self.ndjson(chunkSize: chunkSize))
        }
        #expect(error?.code == .malformedJSON)
        #expect(error?.description == "users.ndjson: byte 59 (line 2, column 30): unexpected '}': expected a string key after ',' (trailing commas are not allowed)")
        #expect(try blog.store.count("User") == 0)
    }

    @Test("two values on one line, or a value spanning lines, are errors at their byte")
    func oneValuePerLine() async throws {
        let blog = try BlogFixture()
        let two = #"{"user_id": 1}"# + "\n" + #"{"user_id": 2} {"user_id": 3}"# + "\n"
        let twoError = await #expect(throws: SyncError.self) {
            try await blog.engine.importChunks(Chunked(bytes: Array(two.utf8), size: 8), into: .entity("User"),
                                               source: "in", options: Self.ndjson())
        }
        #expect(twoError?.description == "in: byte 30 (line 2, column 16): unexpected '{' after the line's value: "
                + "NDJSON holds one JSON value per line")
        let spanning = "{\"user_id\": 1,\n \"name\": \"Ann\"}\n"
        let spanningError = await #expect(throws: SyncError.self) {
            try await blog.engine.importChunks(Chunked(bytes: Array(spanning.utf8), size: 100), into: .entity("User"),
                                               source: "in", options: Self.ndjson())
        }
        #expect(spanningError?.description == "in: byte 14 (line 1, column 15): unexpected end of input: expected a string key after ','")
        #expect(try blog.store.count("User") == 0)
    }

    @Test("a line that does not map names its line and byte offset, and its pointer as in the array")
    func mappingErrorNamesLine() async throws {
        let text = #"{"user_id": 1, "name": "Ann"}"# + "\n\n" + #"{"user_id": 2, "created_at": "soon"}"# + "\n"
        let blog = try BlogFixture()
        let error = await #expect(throws: SyncError.self) {
            try await blog.engine.importChunks(Chunked(bytes: Array(text.utf8), size: 16), into: .entity("User"),
                                               source: "users.ndjson", options: Self.ndjson())
        }
        #expect(error?.code == .invalidObject)
        #expect(error?.description == "users.ndjson: line 3 (byte 31): User.createdAt at /1/created_at: cannot convert \"soon\" to date "
                + "(expected ISO 8601 text or Unix seconds or milliseconds)")
        #expect(try blog.store.count("User") == 0)
        var skipping = Self.ndjson()
        skipping.onInvalid = .skip
        let skipped = try await blog.engine.importChunks(Chunked(bytes: Array(text.utf8), size: 16), into: .entity("User"),
                                                         options: skipping)
        #expect(skipped.changes["User"]?.inserted.ints == [1])
        #expect(skipped.skipped.map(\.pointer.description) == ["/1"])
    }

    @Test("through a route targeting an entity each line is one of its objects in the route's scope; stale rows go")
    func routeTargetingEntity() async throws {
        let blog = try BlogFixture()
        _ = try await blog.sync("/users", #"[{"user_id": 1, "name": "Ann", "posts": [{"id": 1, "title": "one"}, {"id": 2, "title": "2"}, {"id": 3, "title": "three"}]}]"#)
        let text = #"{"id": 2, "title": "two"}"# + "\n" + #"{"id": 4, "title": "four"}"# + "\n"
        let result = try await blog.engine.importChunks(Chunked(bytes: Array(text.utf8), size: 10), into: .route(.get, "/users/1/posts"),
                                                        options: Self.ndjson())
        #expect(result.changes["Post"]?.inserted.ints == [4])
        #expect(result.changes["Post"]?.updated.ints == [2])
        #expect(result.changes["Post"]?.deleted.ints == [1, 3])
        #expect(try blog.keys("Post", where: "userID = 1") == [.integer(2), .integer(4)])
    }

    @Test("MANY and DATA routes refuse NDJSON before reading a byte")
    func refusesManyAndData() async throws {
        let blog = try BlogFixture()
        for (path, target) in [("/bootstrap", "MANY"), ("/stats", "DATA")] {
            let error = await #expect(throws: SyncError.self) {
                try await blog.engine.importChunks(Chunked(bytes: Array("{}\n".utf8), size: 10), into: .route(.get, path),
                                                   options: Self.ndjson())
            }
            #expect(error?.code == .unexpectedShape)
            #expect(error?.message == "NDJSON holds one object per line, but the route GET \(path) targets \(target): "
                    + "import NDJSON into an entity, or through a route that targets one")
        }
    }

    @Test("an empty input and blank lines only are an empty collection; a line past the streaming limit fails")
    func emptyAndTooLong() async throws {
        let blog = try BlogFixture()
        let empty = try await blog.engine.importChunks(Chunked(bytes: Array("\n \r\n\n".utf8), size: 2), into: .entity("User"),
                                                       options: Self.ndjson())
        #expect(empty.objectCount == 0)
        #expect(empty.changes.isEmpty)
        var limited = Self.ndjson(chunkSize: 16)
        limited.limits.maxStreamedValueSize = 40
        let text = #"{"user_id": 1}"# + "\n" + #"{"user_id": 2, "name": "a name far too long for the limit"}"# + "\n"
        let error = await #expect(throws: SyncError.self) {
            try await blog.engine.importChunks(Chunked(bytes: Array(text.utf8), size: 16), into: .entity("User"),
                                               source: "in", options: limited)
        }
        #expect(error?.description == "in: byte 15 (line 2, column 1): line longer than the streaming limit of 40 bytes")
        #expect(try blog.store.count("User") == 0)
    }

    @Test("a large NDJSON file imports in bounded memory, in chunks")
    func largeFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("posts.jsonl")
        var text = ""
        for id in 1...20_000 { text += #"{"id": \#(id), "title": "post \#(id)", "published": \#(id % 2 == 0)}"# + "\n" }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let blog = try BlogFixture()
        let result = try await blog.engine.importFile(path, into: .entity("Post", scope: ["userID": .integer(7)]),
                                                      options: SyncOptions(chunkSize: 4096))
        #expect(result.changes["Post"]?.inserted.count == 20_000)
        #expect(try blog.store.count("Post", where: "userID = 7 AND published = 1") == 10_000)
    }
}
