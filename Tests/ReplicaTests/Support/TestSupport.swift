import Foundation
import ReplicaTestSupport

/// Paths for tests.
enum TestSupport {
    /// A file under `Schemas/`.
    static func schemaFile(_ name: String) -> URL {
        packageRoot.appendingPathComponent("Schemas").appendingPathComponent(name)
    }
}
