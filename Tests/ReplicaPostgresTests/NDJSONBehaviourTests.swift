import Foundation
import Replica
import ReplicaTestSupport
import Testing

/// NDJSON imports and base64 with line breaks, asserted on SQLite and on PostgreSQL.
@Suite("NDJSON import on SQLite and PostgreSQL")
struct NDJSONBehaviourTests {
    /// Three people, one per line, Bob's avatar in base64 broken into lines as GitHub's contents API sends it.
    static let people = #"{"id": 1, "name": "Ann", "numberOfKids": 2}"# + "\n"
        + "\n"
        + #"{"id": 2, "name": "Bob", "avatar": "SGVsbG8sIFdv\ncmxkIQ==\n"}"# + "\r\n"
        + #"{"id": 3, "name": "Cy"}"# + "\n"

    @Test("an .ndjson file imports as the array of its lines; data attributes read base64 across line breaks",
          arguments: StoreKind.allCases)
    func importsLines(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind)
        let directory = try TemporaryDirectory("replica-ndjson")
        try await withTeardown {
            let file = directory.path("people.ndjson")
            try Data(Self.people.utf8).write(to: URL(fileURLWithPath: file))
            let result = try await test.store.importFile(file, into: .route(.get, "/people"), options: SyncOptions(chunkSize: 7))
            #expect(result.changes["Person"]?.inserted.integers == [1, 2, 3])
            #expect(result.objectCount == 3)
            let rows = try await test.store.rows(RowQuery("Person", sort: [.ascending("id")]))
            #expect(rows.map { $0["name"] } == [.string("Ann"), .string("Bob"), .string("Cy")])
            #expect(rows.dropFirst().first?["avatar"] == .data(Array("Hello, World!".utf8)))
            // The whole file is the complete collection: a second import without Ann deletes her row (/people deletes stale).
            try Data(Self.people.split(separator: "\n", maxSplits: 1)[1].utf8).write(to: URL(fileURLWithPath: file))
            let second = try await test.store.importFile(file, into: .route(.get, "/people"))
            #expect(second.changes["Person"]?.deleted.integers == [1])
            #expect(second.changes["Person"]?.inserted.isEmpty == true)
        } teardown: {
            directory.remove()
            await test.close()
        }
    }

    @Test("a malformed line names its line and byte offset, and nothing is written", arguments: StoreKind.allCases)
    func malformedLineWritesNothing(kind: StoreKind) async throws {
        let test = try await TestStore.make(kind)
        let directory = try TemporaryDirectory("replica-ndjson")
        try await withTeardown {
            let file = directory.path("people.jsonl")
            let text = Self.people + #"{"id": 4, "name": "Dee" "numberOfKids": 1}"# + "\n"
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
            let error = await #expect(throws: SyncError.self) {
                try await test.store.importFile(file, into: .entity("Person"), options: SyncOptions(chunkSize: 16))
            }
            let offset = Self.people.utf8.count + 24
            #expect(error?.description == "\(file): byte \(offset) (line 5, column 25): unexpected '\"': expected ',' or '}' after object member")
            #expect(try await test.store.rows(RowQuery("Person")).isEmpty)
        } teardown: {
            directory.remove()
            await test.close()
        }
    }
}
