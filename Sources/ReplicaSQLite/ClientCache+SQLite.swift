import Foundation
import GRDB
import ReplicaCore

/// The client's records in an SQLite store's `replica_http_cache` table.
extension ClientCache {
    static func entry(for key: String, in db: Database) throws -> Entry? {
        guard try db.replicaTableExists(table) else { return nil }
        let columns = try Set(db.columns(in: table).map(\.name))
        let extra = columns.contains("paged") ? ", next_url, keys, paged" : ", NULL, NULL, 0"
        guard let row = try Row.fetchOne(db, sql: "SELECT etag, last_modified, cursor\(extra) FROM \(table.quotedIdentifier) WHERE url = ?",
                                         arguments: [key]) else { return nil }
        let blob: Data? = row[4]
        var entry = Entry(etag: row[0], lastModified: row[1], cursor: row[2], next: row[3])
        entry.encodedKeys = blob.map { [UInt8]($0) }
        entry.paged = row[5] ?? false
        return entry
    }

    /// Creates the table, or adds the columns a table from an earlier version lacks.
    static func prepare(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS \(table.quotedIdentifier) (
                url TEXT NOT NULL PRIMARY KEY, etag TEXT, last_modified TEXT, cursor TEXT, next_url TEXT, keys BLOB,
                paged INTEGER NOT NULL DEFAULT 0)
            """)
        let columns = try Set(db.columns(in: table).map(\.name))
        if !columns.contains("next_url") { try db.execute(sql: "ALTER TABLE \(table.quotedIdentifier) ADD COLUMN next_url TEXT") }
        if !columns.contains("keys") { try db.execute(sql: "ALTER TABLE \(table.quotedIdentifier) ADD COLUMN keys BLOB") }
        if !columns.contains("paged") {
            try db.execute(sql: "ALTER TABLE \(table.quotedIdentifier) ADD COLUMN paged INTEGER NOT NULL DEFAULT 0")
        }
    }

    /// Writes entries inside the caller's transaction.
    static func write(_ entries: [Record], in db: Database) throws {
        guard !entries.isEmpty else { return }
        try prepare(db)
        let insert = "INSERT INTO \(table.quotedIdentifier) (url, etag, last_modified, cursor, next_url, keys, paged) VALUES (?, ?, ?, ?, ?, ?, ?) "
        let whole = try db.cachedStatement(sql: insert + """
            ON CONFLICT(url) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified,
            cursor = excluded.cursor, next_url = excluded.next_url, keys = excluded.keys, paged = excluded.paged
            """)
        let cursorOnly = try db.cachedStatement(sql: insert + "ON CONFLICT(url) DO UPDATE SET cursor = excluded.cursor")
        for (key, entry) in entries {
            try (entry.onlyCursor ? cursorOnly : whole).execute(arguments: [key, entry.etag, entry.lastModified, entry.cursor, entry.next,
                                                                              entry.encodedKeys.map { Data($0) }, entry.paged])
        }
    }
}
