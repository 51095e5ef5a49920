import Foundation

/// Paths and scratch space for tests.
enum TestSupport {
    /// The package root, found from this file's path.
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A file under `Schemas/`.
    static func schemaFile(_ name: String) -> URL {
        packageRoot.appendingPathComponent("Schemas").appendingPathComponent(name)
    }

    /// A new empty directory, removed when the returned handle is released.
    static func temporaryDirectory() throws -> TemporaryDirectory {
        try TemporaryDirectory()
    }
}

/// A directory under the system temporary directory, deleted on deinit.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("replica-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}
