import CFloor
import Foundation

/// The C floor: the benchmark rows, already in memory, upserted by `CFloor.c`.
enum CFloorImporter {
    /// Runs the passes; `revision` says which data each pass upserts. Only `cfloor_upsert` is timed.
    ///
    /// - Throws: ``BenchmarkError`` on an SQLite error.
    static func run(database: String, count: Int, passes: [(key: String, revision: Int)]) throws -> WorkerReply {
        var error = [CChar](repeating: 0, count: 512)
        guard let db = cfloor_open(database, &error, error.count) else {
            throw BenchmarkError("C floor: \(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))")
        }
        defer { cfloor_close(db) }

        var reply = WorkerReply()
        let clock = ContinuousClock()
        for pass in passes {
            let rows = InMemoryRows(ImportData(count: count, revision: pass.revision))
            var changes: Int64 = 0
            let (status, elapsed) = rows.withItems { items in
                let start = clock.now
                let status = cfloor_upsert(db, items.baseAddress, items.count, &changes)
                return (status, start.duration(to: clock.now))
            }
            guard status == 0 else { throw BenchmarkError("C floor \(pass.key): \(String(cString: cfloor_errmsg(db)))") }
            reply.seconds[pass.key] = elapsed.seconds
            reply.counts["\(pass.key).changes"] = Int(changes)
        }
        return reply
    }

    /// A fingerprint of the `items` table: counts and sums of every column.
    ///
    /// - Throws: ``BenchmarkError`` when the database cannot be read.
    static func checksum(database: String) throws -> String {
        var sums = cfloor_checksum()
        let status = cfloor_checksum_file(database, &sums)
        guard status == 0 else { throw BenchmarkError("checksum of \(database): SQLite error \(status)") }
        return String(format: "n=%lld id=%lld age=%lld active=%lld score=%.3f created=%.1f name=%lld email=%lld city=%lld",
                      sums.count, sums.sum_id, sums.sum_age, sums.sum_active, sums.total_score,
                      sums.total_created_at, sums.length_name, sums.length_email, sums.length_city)
    }
}

/// The generated rows in C layout: every string's bytes in one buffer, fixed fields in arrays.
private struct InMemoryRows {
    var bytes: [UInt8] = []
    var items: [GeneratedItem] = []
    var offsets: [(name: Int, email: Int, city: Int)] = []

    init(_ data: ImportData) {
        items.reserveCapacity(data.count)
        offsets.reserveCapacity(data.count)
        for index in 0..<data.count {
            let item = data.item(at: index)
            let name = bytes.count
            bytes.append(contentsOf: item.name.utf8)
            let email = bytes.count
            bytes.append(contentsOf: item.email.utf8)
            let city = bytes.count
            bytes.append(contentsOf: item.city.utf8)
            offsets.append((name, email, city))
            items.append(item)
        }
    }

    /// Calls `body` with the rows as `cfloor_item`s pointing into `bytes`.
    func withItems<R>(_ body: (UnsafeBufferPointer<cfloor_item>) -> R) -> R {
        bytes.withUnsafeBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { text in
                guard let base = text.baseAddress else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
                var rows: [cfloor_item] = []
                rows.reserveCapacity(items.count)
                for (item, offset) in zip(items, offsets) {
                    rows.append(cfloor_item(
                        id: item.id,
                        name: base + offset.name, name_len: Int32(item.name.utf8.count),
                        email: base + offset.email, email_len: Int32(item.email.utf8.count),
                        city: base + offset.city, city_len: Int32(item.city.utf8.count),
                        age: item.age, score: item.score, active: item.active ? 1 : 0,
                        created_at: Double(item.createdAt)
                    ))
                }
                return rows.withUnsafeBufferPointer(body)
            }
        }
    }
}
