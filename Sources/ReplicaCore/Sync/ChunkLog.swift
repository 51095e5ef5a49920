import Foundation

/// The chunks a streamed sync has read, kept so that they can be parsed again: when a body
/// that was being written as it arrived pauses (``SyncOptions/streamingPatience``), the sync
/// rolls back and stages the whole body instead, starting with these.
///
/// Chunks stay in memory up to ``memoryBudget`` bytes; past that they go to a ``ScratchFile``,
/// one after the other, their lengths kept in memory (a small write of a length before each
/// chunk made the log's writes cost half as much again).
/// Not thread-safe: the parsing thread appends, and once it has ended the next one replays.
final class ChunkLog {
    let memoryBudget: Int
    private var inMemory: [[UInt8]] = []
    private var inMemoryBytes = 0
    private var file: ScratchFile?
    /// The length of each chunk in the scratch file, in order.
    private var spilledLengths: [Int] = []
    private var replaying = false
    private var replayedInMemory = 0
    private var replayedSpilled = 0

    init(memoryBudget: Int) {
        self.memoryBudget = memoryBudget
    }

    /// The bytes kept in memory (the rest is in the scratch file).
    var memoryBytes: Int { inMemoryBytes }

    /// Keeps a chunk (in the order chunks are read).
    ///
    /// - Throws: ``SyncError`` when the scratch file cannot be written.
    func append(_ chunk: [UInt8]) throws {
        if file == nil && inMemoryBytes + chunk.count <= memoryBudget {
            inMemory.append(chunk)
            inMemoryBytes += chunk.count
            return
        }
        let file = try self.file ?? ScratchFile(purpose: "chunk log")
        self.file = file
        try chunk.withUnsafeBytes { try file.write($0) }
        spilledLengths.append(chunk.count)
    }

    /// The kept chunks again, one per call in the order they came, then `nil`. Memory is
    /// released as they are handed back.
    ///
    /// - Throws: ``SyncError`` when the scratch file cannot be read.
    func replay() throws -> [UInt8]? {
        if !replaying {
            replaying = true
            try file?.rewind()
        }
        if replayedInMemory < inMemory.count {
            var chunk: [UInt8] = []
            swap(&chunk, &inMemory[replayedInMemory])
            replayedInMemory += 1
            return chunk
        }
        guard replayedSpilled < spilledLengths.count, let file else { return nil }
        var chunk = [UInt8](repeating: 0, count: spilledLengths[replayedSpilled])
        try chunk.withUnsafeMutableBytes { try file.read(into: $0) }
        replayedSpilled += 1
        return chunk
    }
}
