import Foundation

/// Where a PostgreSQL replica lives: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`.
///
/// Its ``description`` never shows the password, so it can name the database in errors and logs.
///
/// ```swift
/// let url = try PostgresURL("postgres://replica:secret@db.internal:5432/cache")
/// print(url)   // postgres://replica@db.internal:5432/cache
/// ```
public struct PostgresURL: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String

    /// Whether `text` names a PostgreSQL database (`postgres://` or `postgresql://`).
    ///
    /// ```swift
    /// PostgresURL.isPostgres("postgres://localhost/cache")   // true
    /// PostgresURL.isPostgres("cache.sqlite")                 // false
    /// ```
    public static func isPostgres(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://")
    }

    /// Parses a `postgres://` URL. User and database are required; the port defaults to 5432.
    ///
    /// - Throws: ``PostgresStoreError`` (`.invalidURL`) saying what is missing, without the password.
    public init(_ text: String) throws {
        guard Self.isPostgres(text), let components = URLComponents(string: text), let host = components.host, !host.isEmpty
        else {
            throw PostgresStoreError(.invalidURL, "not a PostgreSQL URL (expected postgres://USER@HOST:PORT/DATABASE)",
                                     url: Self.redact(text))
        }
        guard let user = components.user, !user.isEmpty else {
            throw PostgresStoreError(.invalidURL, "the URL names no user (postgres://USER@HOST/DATABASE)", url: Self.redact(text))
        }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !database.isEmpty, !database.contains("/") else {
            throw PostgresStoreError(.invalidURL, "the URL names no database (postgres://USER@HOST/DATABASE)",
                                     url: Self.redact(text))
        }
        self.host = host
        self.port = components.port ?? 5432
        self.username = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database.removingPercentEncoding ?? database
    }

    /// Creates a URL from its parts.
    public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
    }

    /// The URL without its password.
    public var description: String {
        let user = username.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? username
        let name = database.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? database
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return "postgres://\(user)@\(host):\(port)/\(name)"
    }

    /// `text` with anything between `:` and `@` of its authority removed.
    static func redact(_ text: String) -> String {
        guard let scheme = text.range(of: "://") else { return text }
        let rest = text[scheme.upperBound...]
        guard let at = rest.firstIndex(of: "@") else { return text }
        let userInfo = rest[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + String(rest[at...])
    }
}
