import Foundation
import GRDB

/// What the client remembers per URL, inside the store: validators for conditional GETs and
/// since-cursors for incremental sync (table `replica_http_cache`).
struct ClientCache: Sendable {
    struct Entry: Sendable, Hashable {
        var etag: String?
        var lastModified: String?
        var cursor: String?
    }

    let database: any DatabaseWriter
    static let table = "replica_http_cache"

    func entry(for key: String) async throws -> Entry? {
        try await database.read { db in
            guard try db.replicaTableExists(Self.table) else { return nil }
            guard let row = try Row.fetchOne(db, sql: "SELECT etag, last_modified, cursor FROM \(Self.table.quotedIdentifier) WHERE url = ?",
                                             arguments: [key]) else { return nil }
            return Entry(etag: row[0], lastModified: row[1], cursor: row[2])
        }
    }

    func update(_ key: String, _ change: @escaping @Sendable (inout Entry) -> Void) async throws {
        try await database.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS \(Self.table.quotedIdentifier) (
                    url TEXT NOT NULL PRIMARY KEY, etag TEXT, last_modified TEXT, cursor TEXT)
                """)
            var entry = Entry()
            if let row = try Row.fetchOne(db, sql: "SELECT etag, last_modified, cursor FROM \(Self.table.quotedIdentifier) WHERE url = ?",
                                          arguments: [key]) {
                entry = Entry(etag: row[0], lastModified: row[1], cursor: row[2])
            }
            change(&entry)
            try db.execute(sql: "INSERT INTO \(Self.table.quotedIdentifier) (url, etag, last_modified, cursor) VALUES (?, ?, ?, ?) "
                           + "ON CONFLICT(url) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified, "
                           + "cursor = excluded.cursor",
                           arguments: [key, entry.etag, entry.lastModified, entry.cursor])
        }
    }
}
