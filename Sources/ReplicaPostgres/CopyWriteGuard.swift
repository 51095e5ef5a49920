import NIOCore
import PostgresNIO

/// Writes COPY data on the connection's own event loop, after checking there that the connection
/// is still open, in the same turn of the loop as postgres-nio's first step of the write.
///
/// postgres-nio traps (a precondition, "Copy mode is only supported for extended queries") when
/// a `PostgresCopyFromWriter` is written to after its connection has closed: a server that drops
/// the connection in the middle of a COPY (a terminated backend, a restart) would crash the whole
/// process instead of failing the sync. Its state machine leaves copy mode in the same turn of the
/// event loop in which the channel goes inactive, so a check made on the loop, with no suspension
/// before the write starts, sees a closed connection and throws instead.
///
/// ```swift
/// let guarded = CopyWriteGuard(connection: connection, url: url)
/// try await connection.copyFrom(table: "stage") { writer in try await guarded.write(bytes, to: writer) }
/// ```
actor CopyWriteGuard {
    let connection: PostgresConnection
    let url: PostgresURL
    nonisolated let unownedExecutor: UnownedSerialExecutor

    init(connection: PostgresConnection, url: PostgresURL) {
        self.connection = connection
        self.url = url
        self.unownedExecutor = connection.eventLoop.executor.asUnownedSerialExecutor()
    }

    /// Writes `bytes` to `writer`, or throws ``PostgresStoreError`` when the connection has closed.
    func write(_ bytes: [UInt8], to writer: PostgresCopyFromWriter) async throws {
        guard !connection.isClosed else {
            throw PostgresStoreError(.server, "the connection closed in the middle of a COPY", url: url.description)
        }
        try await writer.write(ByteBuffer(bytes: bytes))
    }
}
