import Foundation

/// The package's root directory, found from this file's path (`Tests/ReplicaTestSupport/…`),
/// for the schema files, the README and the built products the tests read.
///
/// ```swift
/// let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/people.json"))
/// ```
package let packageRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
