import Foundation
import ReplicaCore

/// A `multipart/form-data` body whose file parts are read from disk as it is sent.
///
/// ```swift
/// let body = MultipartBody(fields: [("name", "jeff"), ("avatar", .file(upload))])
/// request.headers["Content-Type"] = body.contentType
/// ```
public struct MultipartBody: Sendable, Hashable {
    public enum Content: Sendable, Hashable {
        case bytes([UInt8])
        case file(path: String)
    }

    public struct Part: Sendable, Hashable {
        public var name: String
        public var fileName: String?
        public var contentType: String?
        public var content: Content
    }

    public var boundary: String
    public var parts: [Part]

    /// A body from flattened form fields; file parameters become file parts.
    public init(fields: [(String, Parameter)], boundary: String = "replica-" + UUID().uuidString) {
        self.boundary = boundary
        self.parts = fields.map { name, parameter in
            if case .file(let file) = parameter {
                let content: Content
                switch file.source {
                case .bytes(let bytes): content = .bytes(bytes)
                case .file(let path): content = .file(path: path)
                }
                return Part(name: name, fileName: file.fileName, contentType: file.mimeType, content: content)
            }
            return Part(name: name, fileName: nil, contentType: nil, content: .bytes(Array((parameter.text ?? "").utf8)))
        }
    }

    /// The `Content-Type` header value.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    func head(of part: Part) -> [UInt8] {
        var text = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.quote(part.name))\""
        if let fileName = part.fileName { text += "; filename=\"\(Self.quote(fileName))\"" }
        text += "\r\n"
        if let type = part.contentType { text += "Content-Type: \(type)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    var tail: [UInt8] { Array("--\(boundary)--\r\n".utf8) }

    static func quote(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(of: "\n", with: "%0A")
    }

    /// The total length, or `nil` when a file cannot be measured.
    public var contentLength: Int64? {
        var total = Int64(tail.count)
        for part in parts {
            total += Int64(head(of: part).count) + 2
            switch part.content {
            case .bytes(let bytes): total += Int64(bytes.count)
            case .file(let path):
                guard let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
                else { return nil }
                total += size
            }
        }
        return total
    }

    /// The bytes of a file as chunks, read as they are taken.
    public static func fileChunks(path: String, chunkSize: Int = 1 << 16) -> AsyncThrowingStream<[UInt8], any Error> {
        // Handed to the stream, whose one consumer calls `next()` once at a time.
        let reader = UncheckedBox(FileChunkReader(path: path, chunkSize: chunkSize))
        return AsyncThrowingStream { try reader.value.next() }
    }

    /// The body as chunks, reading files `chunkSize` bytes at a time, each chunk only when the
    /// consumer asks for it (back-pressure: a slow upload holds one chunk, not the file).
    ///
    /// - Throws: ``ClientError`` `.invalidRequest` when a file cannot be read.
    public func chunks(chunkSize: Int = 1 << 16) -> AsyncThrowingStream<[UInt8], any Error> {
        // Handed to the stream, whose one consumer calls `next()` once at a time.
        let reader = UncheckedBox(MultipartReader(body: self, chunkSize: chunkSize))
        return AsyncThrowingStream { try reader.value.next() }
    }
}

/// Produces a multipart body's chunks one at a time, on demand: each part's head, its content
/// (files read chunk by chunk), the line break after it, and the closing boundary. Not
/// thread-safe: a stream hands it to its single consumer, which calls `next()` once at a time.
final class MultipartReader {
    private let body: MultipartBody
    private let chunkSize: Int
    private var part = 0
    private enum Phase { case head, content, file(FileChunkReader), lineBreak, tail, done }
    private var phase = Phase.head

    init(body: MultipartBody, chunkSize: Int) {
        self.body = body
        self.chunkSize = chunkSize
    }

    func next() throws -> [UInt8]? {
        while true {
            if Task.isCancelled { return nil }
            switch phase {
            case .done:
                return nil
            case .tail:
                phase = .done
                return body.tail
            case .head:
                guard part < body.parts.count else {
                    phase = .tail
                    continue
                }
                phase = .content
                return body.head(of: body.parts[part])
            case .content:
                switch body.parts[part].content {
                case .bytes(let bytes):
                    phase = .lineBreak
                    if !bytes.isEmpty { return bytes }
                case .file(let path):
                    phase = .file(FileChunkReader(path: path, chunkSize: chunkSize))
                }
            case .file(let reader):
                if let chunk = try reader.next() { return chunk }
                phase = .lineBreak
            case .lineBreak:
                part += 1
                phase = .head
                return Array("\r\n".utf8)
            }
        }
    }
}

/// Reads a file chunk by chunk for an unfolding stream. Not thread-safe: the stream hands it to
/// its single consumer, which calls `next()` once at a time.
final class FileChunkReader {
    private let path: String
    private let chunkSize: Int
    private var handle: FileHandle?

    init(path: String, chunkSize: Int) {
        self.path = path
        self.chunkSize = chunkSize
    }

    func next() throws -> [UInt8]? {
        if handle == nil {
            guard let opened = FileHandle(forReadingAtPath: path) else {
                throw ClientError(.invalidRequest, "cannot read upload file \(path)")
            }
            handle = opened
        }
        guard let data = try handle?.read(upToCount: chunkSize), !data.isEmpty else {
            try? handle?.close()
            return nil
        }
        return [UInt8](data)
    }

    deinit { try? handle?.close() }
}
