import Foundation

/// A new, empty folder under the system's temporary directory, with a unique name; removed by
/// ``remove()`` (a value, not a class: nothing is deleted behind the test's back when the last
/// reference goes, which Swift may do before the end of the scope).
///
/// ```swift
/// let directory = try TemporaryDirectory("replica-sync")
/// defer { directory.remove() }
/// let store = try Store(path: directory.path("people.sqlite"), schema: schema)
/// ```
package struct TemporaryDirectory: Sendable {
    /// The folder.
    package let url: URL

    /// Creates the folder `<prefix>-<UUID>` under the system's temporary directory.
    ///
    /// ```swift
    /// let directory = try TemporaryDirectory("replica-cli")
    /// ```
    ///
    /// - Parameters:
    ///   - prefix: the start of the folder's name, saying which tests made it.
    /// - Throws: the file system's error when the folder cannot be created.
    package init(_ prefix: String = "replica-tests") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The folder's path.
    package var path: String { url.path }

    /// The URL of `name` in the folder.
    ///
    /// ```swift
    /// try Data("[]".utf8).write(to: directory.url("empty.json"))
    /// ```
    package func url(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// The path of `name` in the folder.
    ///
    /// ```swift
    /// let db = directory.path("people.sqlite")
    /// ```
    package func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Removes the folder and everything in it; a folder already gone is no error.
    ///
    /// ```swift
    /// defer { directory.remove() }
    /// ```
    package func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
