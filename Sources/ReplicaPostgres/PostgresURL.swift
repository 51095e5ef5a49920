import Foundation

/// Where a PostgreSQL replica lives: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE&sslrootcert=FILE]`.
///
/// Its ``description`` never shows the password, so it can name the database in errors and logs;
/// it keeps `sslmode` and `sslrootcert`, so a log says whether the connection is encrypted.
///
/// ```swift
/// let url = try PostgresURL("postgres://replica:secret@db.internal:5432/cache?sslmode=verify-full&sslrootcert=ca.pem")
/// print(url)   // postgres://replica@db.internal:5432/cache?sslmode=verify-full&sslrootcert=ca.pem
/// ```
///
/// TLS follows libpq's `sslmode` and `sslrootcert` (see ``SSLMode``); no other query parameter
/// is accepted.
public struct PostgresURL: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    /// `?sslmode=`: whether the connection is encrypted and what of the server's certificate is
    /// verified; `nil` when the URL names none (then ``effectiveSSLMode`` is ``SSLMode/prefer``,
    /// or ``SSLMode/verifyFull`` with `sslrootcert=system`).
    public var sslMode: SSLMode?
    /// `?sslrootcert=`: a PEM file of the CA certificates to trust, or `system` for the system's
    /// trust store; `nil` when the URL names none (then no certificate is verified).
    public var sslRootCert: String?

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
    /// ```swift
    /// let url = try PostgresURL("postgres://replica@127.0.0.1/cache?sslmode=require")
    /// url.effectiveSSLMode   // .require
    /// ```
    ///
    /// - Throws: ``PostgresStoreError`` (`.invalidURL`) saying what is missing or which query
    ///   parameter is wrong, without the password. The `sslrootcert` file is read when the
    ///   replica opens, not here.
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
        try readQuery(components.queryItems ?? [], url: Self.redact(text))
        try checkTLSSettings(url: Self.redact(text))
    }

    /// Creates a URL from its parts.
    ///
    /// ```swift
    /// let url = PostgresURL(host: "db.internal", username: "replica", database: "cache",
    ///                       sslMode: .verifyFull, sslRootCert: "/etc/replica/ca.pem")
    /// ```
    public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String,
                sslMode: SSLMode? = nil, sslRootCert: String? = nil) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.sslMode = sslMode
        self.sslRootCert = sslRootCert
    }

    /// The URL without its password.
    public var description: String {
        let user = username.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? username
        let name = database.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? database
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return "postgres://\(user)@\(host):\(port)/\(name)" + queryDescription
    }

    /// `?sslmode=…&sslrootcert=…` with the parameters the URL names, or nothing.
    private var queryDescription: String {
        var items: [String] = []
        if let sslMode { items.append("sslmode=\(sslMode.rawValue)") }
        if let sslRootCert {
            var allowed = CharacterSet.urlQueryAllowed
            allowed.remove(charactersIn: "&=+#")
            items.append("sslrootcert=" + (sslRootCert.addingPercentEncoding(withAllowedCharacters: allowed) ?? sslRootCert))
        }
        return items.isEmpty ? "" : "?" + items.joined(separator: "&")
    }

    /// Reads `sslmode` and `sslrootcert`; any other parameter, a repeated one or an unknown
    /// value is refused.
    private mutating func readQuery(_ items: [URLQueryItem], url: String) throws {
        var seen: Set<String> = []
        for item in items {
            guard seen.insert(item.name).inserted else {
                throw PostgresStoreError(.invalidURL, "the URL parameter '\(item.name)' is given twice", url: url)
            }
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                guard let mode = SSLMode(rawValue: value) else {
                    let known = SSLMode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw PostgresStoreError(.invalidURL, "invalid sslmode value '\(value)' (expected one of: \(known))", url: url)
                }
                sslMode = mode
            case "sslrootcert":
                guard !value.isEmpty else {
                    throw PostgresStoreError(.invalidURL, "sslrootcert is empty (expected a PEM file of CA certificates, "
                                             + "or system)", url: url)
                }
                sslRootCert = value
            default:
                throw PostgresStoreError(.invalidURL, "unknown URL parameter '\(item.name)' (Replica reads sslmode and "
                                         + "sslrootcert)", url: url)
            }
        }
    }

    /// `text` with anything between `:` and `@` of its authority removed, and the value of a
    /// `password` query parameter (libpq's) too.
    static func redact(_ text: String) -> String {
        let text = redactQueryPassword(text)
        guard let scheme = text.range(of: "://") else { return text }
        let rest = text[scheme.upperBound...]
        guard let at = rest.firstIndex(of: "@") else { return text }
        let userInfo = rest[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + String(rest[at...])
    }

    /// `text` with the value of each `password=` query parameter replaced by `…`.
    private static func redactQueryPassword(_ text: String) -> String {
        guard let question = text.firstIndex(of: "?") else { return text }
        let query = text[text.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map { item in
            item.lowercased().hasPrefix("password=") ? "password=…" : String(item)
        }
        return String(text[...question]) + query.joined(separator: "&")
    }
}
