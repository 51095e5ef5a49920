import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The planned rows of a sync session, kept outside the database until the session commits.
///
/// Batches stay in memory up to ``memoryBudget`` bytes; past that they go to an anonymous
/// scratch file (created in the temporary directory and unlinked at once, so it disappears
/// with the process whatever happens). Replaying reads them back in order, one batch at a
/// time, so memory stays bounded whatever the collection's size.
///
/// Not thread-safe: one sync session owns it and uses it from one task at a time.
package final class StagedRows {
    /// Bytes of batches kept in memory before spilling to the scratch file.
    let memoryBudget: Int
    private var inMemory: [RowBatch] = []
    private var inMemoryBytes = 0
    private var file: ScratchFile?
    /// The rows staged so far.
    package private(set) var rowCount = 0
    /// The order batches were staged in: `true` for a spilled one, `false` for one in memory.
    private var order: [Bool] = []

    init(memoryBudget: Int = 4 << 20) {
        self.memoryBudget = memoryBudget
    }

    deinit { discard() }

    /// Whether nothing was staged.
    package var isEmpty: Bool { rowCount == 0 }

    /// Keeps a copy of `batch`.
    ///
    /// - Throws: ``SyncError`` with code `.input` when the scratch file cannot be written.
    func append(_ batch: RowBatch) throws {
        guard !batch.isEmpty else { return }
        rowCount += batch.count
        // What a copy kept in memory holds on to: its arrays' capacity.
        let bytes = batch.retainedBytes
        // Batches holding unusual keys (general path only, rare) stay in memory: their keys are Swift
        // values. Composite keys (tuples of integers and strings) are written as JSON text.
        let keyText = Self.encodeTuples(batch.otherKeys)
        if inMemoryBytes + bytes <= memoryBudget || (!batch.otherKeys.isEmpty && keyText == nil) {
            inMemory.append(RowBatch(rows: batch.rows, cells: batch.cells, arena: Array(batch.arena), otherKeys: batch.otherKeys))
            inMemoryBytes += bytes
            order.append(false)
            return
        }
        let file = try self.file ?? ScratchFile(purpose: "staging")
        self.file = file
        let keyBytes = Array((keyText ?? "").utf8)
        var header: (Int64, Int64, Int64, Int64) = (Int64(batch.rows.count), Int64(batch.cells.count), Int64(batch.arena.count),
                                                    Int64(keyBytes.count))
        try withUnsafeBytes(of: &header) { try file.write($0) }
        try batch.rows.withUnsafeBytes { try file.write($0) }
        try batch.cells.withUnsafeBytes { try file.write($0) }
        try batch.arena.withUnsafeBytes { try file.write($0) }
        if !keyBytes.isEmpty { try keyBytes.withUnsafeBytes { try file.write($0) } }
        order.append(true)
    }

    /// Composite keys by row as JSON text (`[[row, [part, …]], …]`); `nil` when some key is not a
    /// composite key, `""` when there are none.
    static func encodeTuples(_ keys: [Int: AttributeValue]) -> String? {
        if keys.isEmpty { return "" }
        var items: [JSONValue] = []
        items.reserveCapacity(keys.count)
        for (row, key) in keys {
            guard case .json(let tuple) = key, key.compositeKeyParts != nil else { return nil }
            items.append(.array([.int(Int64(row)), tuple]))
        }
        return JSONValue.array(items).serialized()
    }

    /// The keys of ``encodeTuples(_:)`` read back.
    static func decodeTuples(_ bytes: [UInt8]) throws -> [Int: AttributeValue] {
        guard !bytes.isEmpty else { return [:] }
        guard case .array(let items) = try JSONValue(parsing: String(decoding: bytes, as: UTF8.self)) else {
            throw SyncError(.input, "the staging file holds unreadable keys")
        }
        var keys: [Int: AttributeValue] = [:]
        for item in items {
            guard case .array(let pair) = item, pair.count == 2, case .int(let row) = pair[0] else {
                throw SyncError(.input, "the staging file holds unreadable keys")
            }
            keys[Int(row)] = .json(pair[1])
        }
        return keys
    }

    /// Hands every staged batch to `body`, in the order they were staged.
    ///
    /// - Throws: What `body` throws, or ``SyncError`` when the scratch file cannot be read.
    package func replay(_ body: (RowBatch) throws -> Void) throws {
        var memoryIndex = 0
        try file?.rewind()
        var rows: [RowBatch.Row] = []
        var cells: [RowBatch.Cell] = []
        var arena: [UInt8] = []
        for spilled in order {
            guard spilled, let file else {
                try body(inMemory[memoryIndex])
                memoryIndex += 1
                continue
            }
            var header: (Int64, Int64, Int64, Int64) = (0, 0, 0, 0)
            try withUnsafeMutableBytes(of: &header) { try file.read(into: $0) }
            // The buffers are reused from batch to batch (the previous batch is gone by now).
            rows.removeAll(keepingCapacity: true)
            rows.append(contentsOf: repeatElement(RowBatch.Row(entity: 0, firstCell: 0, cellCount: 0, mask: 0, isTopLevel: false),
                                                  count: Int(header.0)))
            cells.removeAll(keepingCapacity: true)
            cells.append(contentsOf: repeatElement(.absent, count: Int(header.1)))
            arena.removeAll(keepingCapacity: true)
            arena.append(contentsOf: repeatElement(0, count: Int(header.2)))
            try rows.withUnsafeMutableBytes { try file.read(into: $0) }
            try cells.withUnsafeMutableBytes { try file.read(into: $0) }
            try arena.withUnsafeMutableBytes { try file.read(into: $0) }
            var keyBytes = [UInt8](repeating: 0, count: Int(header.3))
            if !keyBytes.isEmpty { try keyBytes.withUnsafeMutableBytes { try file.read(into: $0) } }
            try body(RowBatch(rows: rows, cells: cells, arena: arena, otherKeys: try Self.decodeTuples(keyBytes)))
        }
    }

    /// ``replay(_:)`` on a thread of its own, for a `body` that may block (a bounded pipe to a
    /// database connection) without holding a thread of Swift concurrency's pool.
    ///
    /// - Throws: What ``replay(_:)`` throws.
    package func replayOnThread(_ body: @escaping (RowBatch) throws -> Void) async throws {
        let work = UncheckedBox((self, body))
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
                continuation.resume(with: Result { try work.value.0.replay(work.value.1) })
            }
            thread.name = "Replica.replay"
            thread.start()
        }
    }

    /// Frees the memory and closes (and so deletes) the scratch file.
    func discard() {
        inMemory = []
        order = []
        inMemoryBytes = 0
        rowCount = 0
        file = nil
    }
}

/// A scratch file in the temporary directory, unlinked as soon as it is created: it lives as
/// long as this object (its descriptor), and no crash leaves it behind. For data that must stay
/// out of memory: a sync session's staged rows, the chunks a streamed sync has read.
///
/// Not thread-safe: one owner uses it from one thread at a time.
final class ScratchFile {
    private let descriptor: Int32
    /// What the file holds, for messages: "staging", "chunk log".
    let purpose: String

    /// - Throws: ``SyncError`` when the file cannot be created.
    init(purpose: String) throws {
        self.purpose = purpose
        var template = Array((NSTemporaryDirectory() + "/replica-\(purpose.replacingOccurrences(of: " ", with: "-"))-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemp(base)
        }
        guard descriptor >= 0 else {
            throw Self.failure(purpose, "cannot create a \(purpose) file in \(NSTemporaryDirectory())")
        }
        template.withUnsafeBufferPointer { buffer in
            if let base = buffer.baseAddress { _ = unlink(base) }
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Appends `bytes` at the current position.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard var base = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let written = systemWrite(descriptor, base, left)
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.failure(purpose, "cannot write the \(purpose) file: \(String(cString: strerror(errno)))")
            }
            left -= written
            base += written
        }
    }

    /// Fills `bytes` from the current position.
    func read(into bytes: UnsafeMutableRawBufferPointer) throws {
        guard var base = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let count = systemRead(descriptor, base, left)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw Self.failure(purpose, "the \(purpose) file ended early") }
            left -= count
            base += count
        }
    }

    /// Goes back to the start, to read what was written.
    func rewind() throws {
        if lseek(descriptor, 0, SEEK_SET) < 0 { throw Self.failure(purpose, "cannot rewind the \(purpose) file") }
    }

    private static func failure(_ purpose: String, _ message: String) -> SyncError {
        SyncError(.input, message, source: "sync session \(purpose)")
    }
}

// `write` and `read` are also methods of `StagedRows`; these name the system calls.
@inline(__always)
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.write(descriptor, buffer, count)
    #else
    return Darwin.write(descriptor, buffer, count)
    #endif
}

@inline(__always)
func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.read(descriptor, buffer, count)
    #else
    return Darwin.read(descriptor, buffer, count)
    #endif
}
