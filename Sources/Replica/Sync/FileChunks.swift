import Foundation

/// A file (or standard input, `-`) read in chunks for ``SyncEngine/importFile(_:into:options:)``
/// and ``SyncEngine/validateFile(_:into:options:)``; read errors name the file.
final class FileChunks: Sendable {
    let path: String
    /// The file's size, unknown for standard input.
    let size: Int64?
    private let handle: FileHandle
    private let chunkSize: Int

    init(path: String, chunkSize: Int) throws {
        self.path = path
        self.chunkSize = max(1, chunkSize)
        if path == "-" {
            handle = FileHandle.standardInput
            size = nil
        } else {
            guard let opened = FileHandle(forReadingAtPath: path) else {
                throw SyncError(.input, "cannot open file", source: path)
            }
            handle = opened
            size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
        }
    }

    /// The next chunk, `nil` at the end.
    func next() throws -> [UInt8]? {
        do {
            guard let data = try handle.read(upToCount: chunkSize), !data.isEmpty else { return nil }
            return [UInt8](data)
        } catch {
            throw SyncError(.input, "cannot read: \(error.localizedDescription)", source: path)
        }
    }

    /// Closes the file (standard input stays open).
    func close() {
        if path != "-" { try? handle.close() }
    }
}
