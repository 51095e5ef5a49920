import Foundation
import Replica

/// The two data shapes of the `import` workload: what the JSON looks like, the table Replica
/// creates for it (the baselines create the same), the route Replica imports it through, and
/// the query that fingerprints the stored table.
enum ImportShape: String, CaseIterable, Codable, Sendable {
    /// 8 fields (`ImportData`): strings with escapes and non-ASCII, integers, doubles, a bool,
    /// an ISO 8601 date. The benchmark schema's `Item`, `GET /items` with stale deletion.
    case items
    /// `Schemas/people.json`'s `Person` (5 attributes, `avatar` a base64 BLOB, mostly null),
    /// `GET /people` with stale deletion as that schema declares it.
    case people

    /// How the table names it, e.g. `import items (8 fields)`.
    var title: String {
        switch self {
        case .items: "import items (8 fields)"
        case .people: "import people (5 attributes)"
        }
    }

    var entity: String { self == .items ? "Item" : "Person" }
    var table: String { self == .items ? "items" : "people" }
    /// The route Replica imports through; both delete stale rows.
    var route: String { self == .items ? "/items" : "/people" }

    /// The table's columns in order, the primary key first.
    var columns: [String] {
        switch self {
        case .items: ["id", "name", "email", "city", "age", "score", "active", "createdAt"]
        case .people: ["id", "name", "numberOfKids", "kilometersWalked", "avatar"]
        }
    }

    /// The table as Replica creates it (checked against `sqlite_master` of Replica's store).
    var createSQL: String {
        switch self {
        case .items:
            #"CREATE TABLE IF NOT EXISTS "items" ("id" INTEGER NOT NULL PRIMARY KEY, "name" TEXT, "email" TEXT, "#
                + #""city" TEXT, "age" INTEGER, "score" REAL, "active" INTEGER, "createdAt" REAL)"#
        case .people:
            #"CREATE TABLE IF NOT EXISTS "people" ("id" INTEGER NOT NULL PRIMARY KEY, "name" TEXT, "#
                + #""numberOfKids" INTEGER, "kilometersWalked" REAL, "avatar" BLOB)"#
        }
    }

    /// One row, one text column: counts and sums over every column, formatted by SQLite itself,
    /// so every implementation (C, Swift, Python) compares the same string.
    var checksumSQL: String {
        switch self {
        case .items:
            """
            SELECT 'n=' || count(*) || ' id=' || sum("id") || ' age=' || sum("age") || ' active=' || sum("active") \
            || ' score=' || printf('%.3f', total("score")) || ' created=' || printf('%.1f', total("createdAt")) \
            || ' name=' || sum(length("name")) || '/' || sum(unicode("name")) || ' email=' || sum(length("email")) \
            || ' city=' || sum(length("city")) || '/' || sum(unicode(substr("city", -1))) FROM "items"
            """
        case .people:
            """
            SELECT 'n=' || count(*) || ' id=' || sum("id") || ' kids=' || sum("numberOfKids") \
            || ' km=' || printf('%.3f', total("kilometersWalked")) \
            || ' name=' || sum(length("name")) || '/' || sum(unicode("name")) || '/' || sum(unicode(substr("name", -1))) \
            || ' avatars=' || count("avatar") || '/' || sum(typeof("avatar") = 'blob') || '/' || total(length("avatar")) \
            || '/' || sum(instr("avatar", x'00')) FROM "people"
            """
        }
    }

    /// The scratch file of `revision` (0 or 1).
    func file(revision: Int, in directory: String) -> String {
        // `items-0.json` is also `import-live`'s file; `sync-pages` has its own `people-N.json`.
        (directory as NSString).appendingPathComponent(self == .items ? "items-\(revision).json" : "import-people-\(revision).json")
    }

    /// Writes `count` objects of `revision` to `path`.
    ///
    /// - Returns: The file size in bytes.
    @discardableResult
    func writeJSON(count: Int, revision: Int, to path: String) throws -> Int {
        switch self {
        case .items: try ImportData(count: count, revision: revision).writeJSON(to: path)
        case .people: try PeopleImportData(count: count, revision: revision).writeJSON(to: path)
        }
    }

    /// The same objects as values in column order, for the C floor.
    func rows(count: Int, revision: Int) -> CRows {
        switch self {
        case .items:
            let data = ImportData(count: count, revision: revision)
            return CRows(columnCount: columns.count, rowCount: count) { index, row in
                let item = data.item(at: index)
                row.integer(item.id); row.text(item.name); row.text(item.email); row.text(item.city)
                row.integer(item.age); row.real(item.score); row.integer(item.active ? 1 : 0); row.real(Double(item.createdAt))
            }
        case .people:
            let data = PeopleImportData(count: count, revision: revision)
            return CRows(columnCount: columns.count, rowCount: count) { index, row in
                let person = data.person(at: index)
                row.integer(person.id); row.text(person.name); row.integer(person.numberOfKids)
                row.real(person.kilometersWalked); row.blob(person.avatar)
            }
        }
    }

    /// The schema Replica imports with: the benchmark schema for items, `Schemas/people.json` for people.
    func schema() throws -> Schema {
        switch self {
        case .items: try ReplicaImporter.schema()
        case .people: try Schema(contentsOf: URL(fileURLWithPath: SyncPagesWorkload.schemaPath))
        }
    }
}
