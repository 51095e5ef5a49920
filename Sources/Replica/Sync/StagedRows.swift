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
final class StagedRows {
    /// Bytes of batches kept in memory before spilling to the scratch file.
    let memoryBudget: Int
    private var inMemory: [RowBatch] = []
    private var inMemoryBytes = 0
    private var file: Int32 = -1
    /// Bytes written to the scratch file.
    private(set) var spilledBytes: Int64 = 0
    /// The rows staged so far.
    private(set) var rowCount = 0
    /// The order batches were staged in: `true` for a spilled one, `false` for one in memory.
    private var order: [Bool] = []

    init(memoryBudget: Int = 4 << 20) {
        self.memoryBudget = memoryBudget
    }

    deinit { discard() }

    /// Whether nothing was staged.
    var isEmpty: Bool { rowCount == 0 }

    /// Keeps a copy of `batch`.
    ///
    /// - Throws: ``SyncError`` with code `.input` when the scratch file cannot be written.
    func append(_ batch: RowBatch) throws {
        guard !batch.isEmpty else { return }
        rowCount += batch.count
        // What a copy kept in memory holds on to: its arrays' capacity.
        let bytes = batch.retainedBytes
        // Batches holding unusual keys (general path only, rare) stay in memory: their keys are Swift values.
        if inMemoryBytes + bytes <= memoryBudget || !batch.otherKeys.isEmpty {
            inMemory.append(RowBatch(rows: batch.rows, cells: batch.cells, arena: batch.arena, otherKeys: batch.otherKeys))
            inMemoryBytes += bytes
            order.append(false)
            return
        }
        try openFile()
        var header: (Int64, Int64, Int64) = (Int64(batch.rows.count), Int64(batch.cells.count), Int64(batch.arena.count))
        try withUnsafeBytes(of: &header) { try write($0) }
        try batch.rows.withUnsafeBytes { try write($0) }
        try batch.cells.withUnsafeBytes { try write($0) }
        try batch.arena.withUnsafeBytes { try write($0) }
        order.append(true)
    }

    /// Hands every staged batch to `body`, in the order they were staged.
    ///
    /// - Throws: What `body` throws, or ``SyncError`` when the scratch file cannot be read.
    func replay(_ body: (RowBatch) throws -> Void) throws {
        var memoryIndex = 0
        if file >= 0, lseek(file, 0, SEEK_SET) < 0 { throw Self.failure("cannot rewind the staging file") }
        var rows: [RowBatch.Row] = []
        var cells: [RowBatch.Cell] = []
        var arena: [UInt8] = []
        for spilled in order {
            guard spilled else {
                try body(inMemory[memoryIndex])
                memoryIndex += 1
                continue
            }
            var header: (Int64, Int64, Int64) = (0, 0, 0)
            try withUnsafeMutableBytes(of: &header) { try read(into: $0) }
            // The buffers are reused from batch to batch (the previous batch is gone by now).
            rows.removeAll(keepingCapacity: true)
            rows.append(contentsOf: repeatElement(RowBatch.Row(entity: 0, firstCell: 0, cellCount: 0, mask: 0, isTopLevel: false),
                                                  count: Int(header.0)))
            cells.removeAll(keepingCapacity: true)
            cells.append(contentsOf: repeatElement(.absent, count: Int(header.1)))
            arena.removeAll(keepingCapacity: true)
            arena.append(contentsOf: repeatElement(0, count: Int(header.2)))
            try rows.withUnsafeMutableBytes { try read(into: $0) }
            try cells.withUnsafeMutableBytes { try read(into: $0) }
            try arena.withUnsafeMutableBytes { try read(into: $0) }
            try body(RowBatch(rows: rows, cells: cells, arena: arena, otherKeys: [:]))
        }
    }

    /// Frees the memory and closes (and so deletes) the scratch file.
    func discard() {
        inMemory = []
        order = []
        inMemoryBytes = 0
        rowCount = 0
        if file >= 0 {
            close(file)
            file = -1
        }
        spilledBytes = 0
    }

    private func openFile() throws {
        guard file < 0 else { return }
        var template = Array((NSTemporaryDirectory() + "/replica-staging-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemp(base)
        }
        guard descriptor >= 0 else { throw Self.failure("cannot create a staging file in \(NSTemporaryDirectory())") }
        // Unlinked at once: the file lives as long as the descriptor, and no crash leaves it behind.
        template.withUnsafeBufferPointer { buffer in
            if let base = buffer.baseAddress { _ = unlink(base) }
        }
        file = descriptor
    }

    private func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard var base = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let written = systemWrite(file, base, left)
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.failure("cannot write the staging file: \(String(cString: strerror(errno)))")
            }
            left -= written
            base += written
            spilledBytes += Int64(written)
        }
    }

    private func read(into bytes: UnsafeMutableRawBufferPointer) throws {
        guard var base = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let count = systemRead(file, base, left)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw Self.failure("the staging file ended early") }
            left -= count
            base += count
        }
    }

    private static func failure(_ message: String) -> SyncError {
        SyncError(.input, message, source: "sync session staging")
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
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.read(descriptor, buffer, count)
    #else
    return Darwin.read(descriptor, buffer, count)
    #endif
}
