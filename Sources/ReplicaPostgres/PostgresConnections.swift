import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// The connections of one replica: opened on demand, reused while idle, closed at the end.
///
/// A connection is lent to one operation at a time (``withConnection(_:)``); a connection whose
/// operation failed is closed rather than reused, so no half-finished transaction or COPY is
/// ever handed to the next caller.
package actor PostgresConnections {
    package let url: PostgresURL
    let logger: Logger
    private var idle: [PostgresConnection] = []
    private var closed = false
    private var nextID = 0
    /// Connections kept while idle.
    private let idleLimit = 4

    /// How every connection of this replica is made (its pool's, its listener's and its live
    /// result sets'): host, user, database and TLS.
    nonisolated let configuration: PostgresConnection.Configuration

    /// Connections to `url`; none is opened yet.
    ///
    /// - Throws: ``PostgresStoreError`` `.invalidURL` when the URL's TLS settings cannot be set
    ///   up (an `sslrootcert` file that cannot be read or holds no certificate).
    package init(url: PostgresURL, logger: Logger) throws {
        self.url = url
        self.logger = logger
        var configuration = PostgresConnection.Configuration(host: url.host, port: url.port, username: url.username,
                                                             password: url.password, database: url.database,
                                                             tls: try url.connectionTLS())
        configuration.options.connectTimeout = .seconds(10)
        self.configuration = configuration
    }

    /// Released without ``close()``: the idle connections close in the background (each kept
    /// alive until it has closed).
    deinit {
        for connection in idle where !connection.isClosed {
            connection.close().whenComplete { _ in _ = connection }
        }
    }

    /// A new connection, not pooled (a listener keeps its own).
    ///
    /// - Throws: ``PostgresStoreError`` (`connectionRefused`, `authenticationFailed`, `unknownDatabase`, `tlsFailed`).
    func connect() async throws -> PostgresConnection {
        if closed { throw PostgresStoreError(.server, "the replica is closed", url: url.description) }
        nextID += 1
        do {
            return try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.any(),
                                                        configuration: configuration, id: nextID, logger: logger)
        } catch {
            throw PostgresStoreError.from(error, url: url)
        }
    }

    private func take() async throws -> PostgresConnection {
        while let connection = idle.popLast() {
            if !connection.isClosed { return connection }
        }
        return try await connect()
    }

    private func giveBack(_ connection: PostgresConnection) async {
        if closed || idle.count >= idleLimit || connection.isClosed {
            try? await connection.close()
        } else {
            idle.append(connection)
        }
    }

    private func discard(_ connection: PostgresConnection) async {
        try? await connection.close()
    }

    /// Runs `body` with a connection of its own.
    ///
    /// - Throws: What `body` throws, or a connection error.
    package func withConnection<T: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await take()
        do {
            let result = try await body(connection)
            await giveBack(connection)
            return result
        } catch {
            await discard(connection)
            throw error
        }
    }

    /// Closes every idle connection; connections lent out close when given back.
    package func close() async {
        closed = true
        let connections = idle
        idle = []
        for connection in connections { try? await connection.close() }
    }
}
