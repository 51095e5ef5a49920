import Foundation
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Sync engine: validateFile")
struct ValidateFileTests {
    @Test("reads and maps a file as an import would, and writes nothing")
    func writesNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path("posts.json")
        let posts = "[" + (1...2500).map { #"{"id": \#($0), "title": "post \#($0)", "extra": 1}"# }.joined(separator: ",") + "]"
        try Data(posts.utf8).write(to: URL(fileURLWithPath: file))
        let blog = try BlogFixture()
        let result = try await blog.engine.validateFile(file, into: .entity("Post"), options: SyncOptions(chunkSize: 1000))
        #expect(result.objectCount == 2500)
        #expect(result.byteCount == Int64(posts.utf8.count))
        #expect(result.ignoredKeyCount == 2500)
        #expect(result.changes.isEmpty)
        #expect(try blog.store.count("Post") == 0)
    }

    @Test("fails as an import would: malformed JSON, an object that cannot be mapped")
    func failsLikeImport() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let blog = try BlogFixture()
        let malformed = directory.path("malformed.json")
        try Data(#"[{"id": 1, "title": "a"}, {"id": 2,"#.utf8).write(to: URL(fileURLWithPath: malformed))
        let parse = await #expect(throws: SyncError.self) {
            try await blog.engine.validateFile(malformed, into: .entity("Post"))
        }
        #expect(parse?.code == .malformedJSON)
        let invalid = directory.path("invalid.json")
        try Data(#"[{"id": 1, "title": "a"}, {"id": "two", "title": "b"}]"#.utf8).write(to: URL(fileURLWithPath: invalid))
        let mapping = await #expect(throws: SyncError.self) {
            try await blog.engine.validateFile(invalid, into: .entity("Post"))
        }
        #expect(mapping?.code == .invalidObject)
        #expect(try blog.store.count("Post") == 0)
    }
}
