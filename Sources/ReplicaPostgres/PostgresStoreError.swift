import PostgresNIO

/// A PostgreSQL replica that cannot be reached, opened or written: what and where.
///
/// Its ``url`` never holds the password.
///
/// ```swift
/// do {
///     _ = try await PostgresReplica.open(url: "postgres://replica@127.0.0.1:5999/cache", schema: schema)
/// } catch let error as PostgresStoreError where error.code == .connectionRefused {
///     print(error)   // postgres://replica@127.0.0.1:5999/cache: connection refused (is the server running ...)
/// }
/// ```
public struct PostgresStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let rawValue: String
        public var description: String { rawValue }

        /// The text is not a `postgres://USER@HOST:PORT/DATABASE` URL.
        public static let invalidURL = Code(rawValue: "invalidURL")
        /// Nothing listens at the URL's host and port (or the name does not resolve).
        public static let connectionRefused = Code(rawValue: "connectionRefused")
        /// The server refused the user or password.
        public static let authenticationFailed = Code(rawValue: "authenticationFailed")
        /// The server has no database of that name.
        public static let unknownDatabase = Code(rawValue: "unknownDatabase")
        /// TLS could not be set up as the URL's `sslmode` asks: the server offers no TLS, or its
        /// certificate is not trusted by `sslrootcert` or does not name the URL's host.
        public static let tlsFailed = Code(rawValue: "tlsFailed")
        /// The server refused a statement or the connection broke.
        public static let server = Code(rawValue: "server")
    }

    /// The kind of problem.
    public var code: Code
    /// What is wrong, in words.
    public var message: String
    /// The database, without its password.
    public var url: String

    public init(_ code: Code, _ message: String, url: String) {
        self.code = code
        self.message = message
        self.url = url
    }

    public var description: String { "\(url): \(message)" }

    /// An error of postgres-nio in the user's terms: the server's message and SQLSTATE, or what
    /// happened to the connection.
    package static func from(_ error: any Error, url: PostgresURL, doing what: String? = nil) -> PostgresStoreError {
        let prefix = what.map { "\($0): " } ?? ""
        let location = url.description
        guard let error = error as? PSQLError else {
            if var error = error as? PostgresStoreError {
                if error.url.isEmpty { error.url = location }
                return error
            }
            let text = String(describing: error)
            if text.contains("refused") || text.contains("ECONNREFUSED") {
                return PostgresStoreError(.connectionRefused, prefix + "connection refused (is the server running and "
                                          + "listening on \(url.host):\(url.port)?)", url: location)
            }
            return PostgresStoreError(.server, prefix + text, url: location)
        }
        if let failure = tlsFailure(error, url: url, prefix: prefix) { return failure }
        if let server = error.serverInfo {
            let state = server[.sqlState] ?? ""
            let message = server[.message] ?? "error"
            let detail = server[.detail].map { " (\($0))" } ?? ""
            switch state {
            case "28P01", "28000":
                return PostgresStoreError(.authenticationFailed, prefix + "authentication failed for user '\(url.username)': "
                                          + message, url: location)
            case "3D000":
                return PostgresStoreError(.unknownDatabase, prefix + message, url: location)
            default:
                return PostgresStoreError(.server, prefix + message + detail + (state.isEmpty ? "" : " [SQLSTATE \(state)]"),
                                          url: location)
            }
        }
        switch error.code {
        case .connectionError:
            let underlying = error.underlying.map { String(describing: $0) } ?? ""
            if underlying.contains("refused") || underlying.contains("ECONNREFUSED") || underlying.isEmpty {
                return PostgresStoreError(.connectionRefused, prefix + "connection refused (is the server running and "
                                          + "listening on \(url.host):\(url.port)?)", url: location)
            }
            return PostgresStoreError(.connectionRefused, prefix + "cannot connect: \(underlying)", url: location)
        case .authMechanismRequiresPassword, .saslError, .unsupportedAuthMechanism:
            return PostgresStoreError(.authenticationFailed, prefix + "authentication failed for user '\(url.username)' "
                                      + "(\(error.code))", url: location)
        case .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
            return PostgresStoreError(.server, prefix + "the connection closed (\(error.code))", url: location)
        default:
            return PostgresStoreError(.server, prefix + "\(error.code)", url: location)
        }
    }
}
