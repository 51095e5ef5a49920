import Foundation

/// A file (or standard input, `-`) read in chunks for ``SQLiteReplica/importFile(_:into:options:)``
/// and ``SQLiteReplica/validateFile(_:into:options:)``; read errors name the file.
package final class FileChunks: Sendable {
    let path: String
    /// The file's size, unknown for standard input.
    package let size: Int64?
    private let handle: FileHandle
    private let chunkSize: Int

    package init(path: String, chunkSize: Int) throws {
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

    /// The next chunk, `nil` at the end: one `read` straight into the chunk's own buffer (a pipe
    /// may give less than `chunkSize`).
    package func next() throws -> [UInt8]? {
        let descriptor = handle.fileDescriptor
        var failure: Int32 = 0
        let chunk = [UInt8](unsafeUninitializedCapacity: chunkSize) { buffer, count in
            count = 0
            guard let base = buffer.baseAddress else { return }
            while true {
                let read = systemRead(descriptor, base, buffer.count)
                if read >= 0 {
                    count = read
                    return
                }
                if errno != EINTR {
                    failure = errno
                    return
                }
            }
        }
        if failure != 0 {
            throw SyncError(.input, "cannot read: \(String(cString: strerror(failure)))", source: path)
        }
        return chunk.isEmpty ? nil : chunk
    }

    /// Closes the file (standard input stays open).
    package func close() {
        if path != "-" { try? handle.close() }
    }
}
