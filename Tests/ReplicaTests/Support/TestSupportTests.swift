import Foundation
import ReplicaTestSupport
import Testing

/// The shared test helpers do what the tests rely on.
@Suite("Test support")
struct TestSupportTests {
    @Test("waitUntil returns once the condition holds, and at the deadline throws WaitTimeout naming what and where")
    func waitUntilDeadline() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        try await waitUntil("20 ms passed") { start.duration(to: clock.now) >= .milliseconds(20) }
        #expect(start.duration(to: clock.now) >= .milliseconds(20))

        let error = await #expect(throws: WaitTimeout.self) {
            try await waitUntil("never", timeout: .milliseconds(50)) { false }
        }
        #expect(error?.description.hasPrefix("never: not met within ") == true, "\(String(describing: error))")
        #expect(error?.description.contains("TestSupportTests.swift:") == true, "\(String(describing: error))")
    }

    @Test("withTeardown runs the teardown once after the body, whether it returns or throws")
    func teardownOnEveryPath() async throws {
        var teardowns = 0
        let value = await withTeardown { 42 } teardown: { teardowns += 1 }
        #expect(value == 42)
        #expect(teardowns == 1)

        struct Failure: Error {}
        await #expect(throws: Failure.self) {
            try await withTeardown { throw Failure() } teardown: { teardowns += 1 }
        }
        #expect(teardowns == 2)
    }

    @Test("TemporaryDirectory makes a new empty folder each time; remove() deletes it and what it holds")
    func temporaryDirectory() throws {
        let first = try TemporaryDirectory("replica-support")
        let second = try TemporaryDirectory("replica-support")
        defer { first.remove(); second.remove() }
        #expect(first.url != second.url)
        #expect(first.url.lastPathComponent.hasPrefix("replica-support-"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: first.path).isEmpty)
        try Data("x".utf8).write(to: first.url("file.txt"))
        #expect(first.path("file.txt") == first.url("file.txt").path)
        first.remove()
        #expect(!FileManager.default.fileExists(atPath: first.path))
        #expect(FileManager.default.fileExists(atPath: second.path))
    }

    @Test("packageRoot is the folder holding Package.swift")
    func packageRootHoldsTheManifest() {
        #expect(FileManager.default.fileExists(atPath: packageRoot.appendingPathComponent("Package.swift").path))
    }
}
