import Foundation

/// The bytes of response bodies one ``SyncSession`` has taken in, against
/// ``SyncOptions/maxStagingBytes``: counted on the parsing thread as each chunk is read (one page
/// at a time), so that an endless body or an endless run of pages stops there instead of filling
/// the temporary directory, the memory or the database's log.
final class StagingIntake: Sendable {
    let limit: Int64
    private let taken = Locked<Int64>(0)

    init(limit: Int64) { self.limit = max(0, limit) }

    /// Counts `count` more bytes of the page `source`.
    ///
    /// - Throws: ``SyncError`` `.input` naming the limit, the page and how much the sync had taken in.
    func take(_ count: Int, source: String) throws {
        let total = taken.withLock { taken -> Int64 in
            taken += Int64(count)
            return taken
        }
        guard total > limit else { return }
        throw SyncError(.input, "the sync's response bodies exceed \(ByteCount.describe(limit)) (the maximum "
                        + "staging size; raise it with SyncOptions.maxStagingBytes or --max-staging): "
                        + "\(ByteCount.describe(total)) had arrived, nothing was written", source: source)
    }
}

extension SyncSession {
    /// `next` counting what it reads into `intake`.
    static func counting(_ next: @escaping () throws -> [UInt8]?, into intake: StagingIntake,
                         source: String) -> () throws -> [UInt8]? {
        {
            guard let chunk = try next() else { return nil }
            try intake.take(chunk.count, source: source)
            return chunk
        }
    }

    /// The error a failed page or commit reports: a transport's failure (a dropped connection,
    /// a body past its limits), which the store's transaction may have wrapped as a database
    /// error, as the ``SourceError`` it is (the client's `ClientError`); anything else as it is.
    static func surfaced(_ error: any Error) -> any Error {
        var current: any Error = error
        for _ in 0..<4 {
            if current is any SourceError { return current }
            guard let wrapped = current as? SyncError, let underlying = wrapped.underlying else { break }
            current = underlying
        }
        return error
    }
}

/// An error of what supplied a sync's bytes (the client's transport: a dropped connection, a body
/// past its limits), as opposed to the store's or the input's: a sync reports it as it is, even
/// when the store's transaction wrapped it. The client's `ClientError` is one.
///
/// ```swift
/// extension ClientError: SourceError {}
/// ```
public protocol SourceError: Error {}
