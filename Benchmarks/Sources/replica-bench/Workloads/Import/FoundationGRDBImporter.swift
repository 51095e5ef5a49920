import Foundation
import GRDB

/// The naive Swift path: `JSONDecoder` into `[Item]`, then one GRDB statement
/// executed with boxed `StatementArguments` per row, in one `DatabasePool` write.
enum FoundationGRDBImporter {
    /// The decoded object.
    struct Item: Decodable {
        var id: Int64
        var name: String
        var email: String
        var city: String
        var age: Int64
        var score: Double
        var active: Bool
        var createdAt: Date
    }

    static let createSQL = """
        CREATE TABLE IF NOT EXISTS "items" ("id" INTEGER NOT NULL PRIMARY KEY, "name" TEXT, "email" TEXT, \
        "city" TEXT, "age" INTEGER, "score" REAL, "active" INTEGER, "createdAt" REAL)
        """

    /// The same upsert as the C floor's and the Python script's.
    static let upsertSQL = """
        INSERT INTO "items" ("id", "name", "email", "city", "age", "score", "active", "createdAt") \
        VALUES (?, ?, ?, ?, ?, ?, ?, ?) \
        ON CONFLICT("id") DO UPDATE SET "name" = excluded."name", "email" = excluded."email", \
        "city" = excluded."city", "age" = excluded."age", "score" = excluded."score", \
        "active" = excluded."active", "createdAt" = excluded."createdAt" \
        WHERE "name" IS NOT excluded."name" OR "email" IS NOT excluded."email" \
        OR "city" IS NOT excluded."city" OR "age" IS NOT excluded."age" \
        OR "score" IS NOT excluded."score" OR "active" IS NOT excluded."active" \
        OR "createdAt" IS NOT excluded."createdAt"
        """

    /// Imports each pass's file; the whole of read, decode and write is timed.
    ///
    /// - Throws: Decoding or database errors.
    static func run(database: String, passes: [(key: String, file: String)]) throws -> WorkerReply {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        let pool = try DatabasePool(path: database, configuration: configuration)
        try pool.write { db in try db.execute(sql: createSQL) }

        var reply = WorkerReply()
        let clock = ContinuousClock()
        for pass in passes {
            let start = clock.now
            let data = try Data(contentsOf: URL(fileURLWithPath: pass.file))
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            decoder.dateDecodingStrategy = .iso8601
            let items = try decoder.decode([Item].self, from: data)
            let changes = try pool.write { db -> Int in
                let statement = try db.makeStatement(sql: upsertSQL)
                var changes = 0
                for item in items {
                    try statement.execute(arguments: [
                        item.id, item.name, item.email, item.city, item.age, item.score, item.active,
                        item.createdAt.timeIntervalSince1970,
                    ])
                    changes += db.changesCount
                }
                return changes
            }
            reply.seconds[pass.key] = start.duration(to: clock.now).seconds
            reply.counts["\(pass.key).changes"] = changes
        }
        return reply
    }
}
