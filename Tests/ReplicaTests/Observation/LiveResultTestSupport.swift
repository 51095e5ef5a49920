import Foundation
import GRDB
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// A store of items in groups (and unrelated tags), its engine, and JSON helpers.
struct LiveResultFixture {
    let store: Store
    let engine: SQLiteReplica

    static func schema() throws -> Schema {
        try Schema(name: "live", routes: [
            Route(.get, "/items", target: .entity("Item")),
            Route(.get, "/groups/:groupID/items", target: .entity("Item"), stale: .delete),
            Route(.get, "/tags", target: .entity("Tag")),
            Route(.get, "/stats", target: .data),
        ]) {
            Entity("Item") {
                Attribute("id", .integer)
                Attribute("groupID", .integer)
                Attribute("category", .string)
                Attribute("score", .integer)
                Attribute("name", .string)
                Attribute("price", .double)
                Attribute("flag", .bool)
            }
            Entity("Tag") {
                Attribute("id", .integer)
                Attribute("label", .string)
            }
        }
    }

    init() throws {
        store = try Store.inMemory(schema: try Self.schema())
        engine = try SQLiteReplica(store: store)
    }

    /// One item as JSON; `nil` values are JSON null.
    struct Item: Sendable, Hashable {
        var id: Int64
        var groupID: Int64
        var category: String?
        var score: Int64?
        var name: String
        var price: Double
        var flag: Bool

        func json(includeGroup: Bool = true) -> String {
            var fields = ["\"id\": \(id)"]
            if includeGroup { fields.append("\"group_id\": \(groupID)") }
            fields.append("\"category\": " + (category.map(Self.quote) ?? "null"))
            fields.append("\"score\": " + (score.map(String.init) ?? "null"))
            fields.append("\"name\": " + Self.quote(name))
            fields.append("\"price\": \(price)")
            fields.append("\"flag\": \(flag)")
            return "{" + fields.joined(separator: ", ") + "}"
        }

        static func quote(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
    }

    @discardableResult
    func upsert(_ items: [Item]) async throws -> SyncResult {
        try await engine.sync(.get, "/items", body: Data(("[" + items.map { $0.json() }.joined(separator: ", ") + "]").utf8))
    }

    /// Replaces a group's items: the ones not listed are deleted as stale.
    @discardableResult
    func replaceGroup(_ group: Int64, with items: [Item]) async throws -> SyncResult {
        let body = "[" + items.map { $0.json(includeGroup: false) }.joined(separator: ", ") + "]"
        return try await engine.sync(.get, "/groups/\(group)/items", body: Data(body.utf8))
    }

    /// The snapshot a fresh query gives for `query`.
    func freshSnapshot(_ query: LiveQuery) throws -> ResultSnapshot {
        var rows = try store.rows(query.rowQuery)
        // A `.rows` window: its slice of the whole result.
        var window: (start: Int, total: Int)?
        if let range = query.window?.testRange {
            let start = min(range.lowerBound, rows.count)
            window = (start, rows.count)
            rows = Array(rows[start ..< min(rows.count, start + range.count)])
        }
        let entity = try store.requireEntity(query.entity)
        let sectionIndex = query.sectionKey.flatMap { key in entity.attributes.firstIndex { $0.name == key } }
        // Group independently of ResultSnapshot's own grouping.
        var groups: [(key: AttributeValue, rows: [EntityRow])] = []
        for row in rows {
            let key = sectionIndex.map { row.values[$0] } ?? .null
            if sectionIndex != nil, let last = groups.last, last.key.isIdentical(to: key) {
                groups[groups.count - 1].rows.append(row)
            } else if sectionIndex != nil || groups.isEmpty {
                groups.append((key, [row]))
            } else {
                groups[0].rows.append(row)
            }
        }
        if sectionIndex == nil && groups.isEmpty { groups = [(.null, [])] }
        let sections = groups.map { ResultSnapshot.Section(key: $0.key, rows: $0.rows) }
        let snapshot = ResultSnapshot(sections: sections, sectionOffset: query.sectionOffset, isSectioned: sectionIndex != nil)
        guard let window else { return snapshot }
        return ResultSnapshot(parts: snapshot.parts, sectionOffset: snapshot.sectionOffset, isSectioned: snapshot.isSectioned,
                              layout: nil, isSorted: false, values: snapshot.values, windowStart: window.start, totalCount: window.total)
    }
}

/// The seed of a randomized test: `REPLICA_TEST_SEED` when set (to replay a failure), else `fallback`.
func testSeed(_ fallback: UInt64) -> UInt64 {
    ProcessInfo.processInfo.environment["REPLICA_TEST_SEED"].flatMap { UInt64($0) } ?? fallback
}


/// A delegate recording every call, and signalling each finished diff.
final class RecordingDelegate: LiveResultSetDelegate, @unchecked Sendable {
    // `@unchecked Sendable`: `events` and `finished` are only touched on the delegate queue
    // given to the result set, and read by the test after awaiting `updates`.
    var events: [String] = []
    var finished: [(ResultSnapshot, ResultDiff)] = []
    let updates: AsyncStream<ResultSnapshot>
    let continuation: AsyncStream<ResultSnapshot>.Continuation
    /// Called at the end of each finished diff (on the delegate queue).
    var onFinish: (@Sendable (LiveResultSet) -> Void)?

    init() {
        (updates, continuation) = AsyncStream<ResultSnapshot>.makeStream()
    }

    func resultSetWillChange(_ resultSet: LiveResultSet, diff: ResultDiff) { events.append("will") }
    func resultSet(_ resultSet: LiveResultSet, didDeleteSection change: ResultDiff.SectionChange) {
        events.append("-s\(change.index)")
    }
    func resultSet(_ resultSet: LiveResultSet, didInsertSection change: ResultDiff.SectionChange) {
        events.append("+s\(change.index)")
    }
    func resultSet(_ resultSet: LiveResultSet, didDeleteRow change: ResultDiff.RowChange) { events.append("-\(change.key)") }
    func resultSet(_ resultSet: LiveResultSet, didInsertRow change: ResultDiff.RowChange) { events.append("+\(change.key)") }
    func resultSet(_ resultSet: LiveResultSet, didMoveRow change: ResultDiff.RowChange) { events.append("~\(change.key)") }
    func resultSet(_ resultSet: LiveResultSet, didUpdateRow change: ResultDiff.RowChange) { events.append("*\(change.key)") }
    func resultSet(_ resultSet: LiveResultSet, didReset snapshot: ResultSnapshot) { events.append("reset \(snapshot.count)") }
    func resultSetDidFinishUpdating(_ resultSet: LiveResultSet, snapshot: ResultSnapshot, diff: ResultDiff) {
        events.append("did")
        finished.append((snapshot, diff))
        onFinish?(resultSet)
        continuation.yield(snapshot)
    }
}

extension LiveWindow {
    /// The positions of a `.rows` window (`nil` for `.around`).
    var testRange: Range<Int>? {
        if case .rows(let offset, let limit) = kind { return offset ..< offset + limit }
        return nil
    }
}
