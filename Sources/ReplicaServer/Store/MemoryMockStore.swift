import Foundation
import ReplicaCore

/// A mock store in memory: fast, empty at each start, safe from any thread (one lock).
///
/// ```swift
/// let server = try await MockServer.start(resources: [people], options: .init(store: MemoryMockStore()))
/// ```
public final class MemoryMockStore: MockStore {
    private struct Table {
        var rows: [JSONValue: JSONObject] = [:]
        /// The keys in primary-key order (`MockValueOrder`), so pages and sort ties come out by key.
        var order: [JSONValue] = []
        /// The rows in that same order (`orderedRows[i]` is `rows[order[i]]`), so that a page is a slice,
        /// not a dictionary lookup per row.
        var orderedRows: [JSONObject] = []
        /// The rows in that order as they go on the wire, when the resource is flat (`bytes.count == order.count`).
        var bytes: MockRowBytes?
        var nextID: Int64 = 1

        /// Keeps ``bytes`` for `resource`: every row rendered again when there are none or they were written
        /// for other properties (a resource added again, changed); none when its rows do not go on the wire as stored.
        mutating func keepBytes(for resource: MockResource) {
            if let bytes, bytes.renders(resource) { return }
            bytes = nil
            bytes = MockRowBytes(resource: resource, rows: orderedRows)
        }

        /// Stores a new row, `values` with its key assigned (``MockResource/assigningKey(to:)``) but for an
        /// auto-increment one, which is given the next number; a conflict if the key is taken.
        mutating func insert(_ values: JSONObject, resource: MockResource) -> Result<JSONObject, MockHTTPError> {
            let key = resource.primaryKey
            var values = values
            let id: JSONValue
            if let given = key.key(of: values) {
                id = given
                if rows[id] != nil {
                    return .failure(MockHTTPError(status: 409, code: "conflict",
                                                  message: "\(resource.name) \(id.serialized()) already exists"))
                }
                if key.kind == .autoIncrement, case .int(let n) = id, n >= nextID { nextID = n + 1 }
            } else {
                // Only an auto-increment key is missing here: `assigningKey` made or required the others.
                id = .int(nextID)
                nextID += 1
                values[key.name] = id
            }
            rows[id] = values
            let position = position(of: id)
            keepBytes(for: resource)
            order.insert(id, at: position)
            orderedRows.insert(values, at: position)
            bytes?.insert(values, at: position)
            return .success(values)
        }

        /// The row `id` with `values` merged into it (the key's properties left as they are); nil when there is none.
        mutating func merge(_ values: JSONObject, into id: JSONValue, resource: MockResource) -> JSONObject? {
            let primaryKey = resource.primaryKey
            guard var object = rows[id] else { return nil }
            for (key, value) in values where !primaryKey.contains(key) { object[key] = value }
            rows[id] = object
            if let index = index(of: id) {
                keepBytes(for: resource)
                orderedRows[index] = object
                bytes?.replace(at: index, with: object)
            }
            return object
        }

        /// Where `id` is in `order`, if it is there.
        func index(of id: JSONValue) -> Int? {
            let index = position(of: id)
            if index < order.count, order[index] == id { return index }
            // Keys `MockValueOrder` ranks alike but that differ (2 and 2.0): not where the search lands.
            return order.firstIndex(of: id)
        }

        /// Where `id` is or would go in `order` (binary search).
        func position(of id: JSONValue) -> Int {
            var low = 0
            var high = order.count
            while low < high {
                let middle = (low + high) / 2
                if MockValueOrder.compare(order[middle], id) < 0 { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }

    private let tables = Locked<[String: Table]>([:])

    /// Creates an empty store.
    ///
    /// ```swift
    /// let store = MemoryMockStore()
    /// ```
    public init() {}

    public func addResource(_ resource: MockResource) async throws {
        tables.withLock { tables in
            // Taken out while it changes, so that the change does not copy the whole table.
            var table = tables.removeValue(forKey: resource.name) ?? Table()
            table.keepBytes(for: resource)
            tables[resource.name] = table
        }
    }

    public func dropResource(_ resource: MockResource) async throws {
        _ = tables.withLock { $0.removeValue(forKey: resource.name) }
    }

    public func object(_ resource: MockResource, id: JSONValue) async throws -> JSONObject? {
        tables.withLock { $0[resource.name]?.rows[id] }.map(resource.complete)
    }

    public func objects(_ resource: MockResource, query: MockQuery) async throws -> MockPage {
        let (rows, total) = storedRows(resource, query: query)
        return MockPage(objects: rows.map(resource.complete), total: total)
    }

    /// The rows of a page as stored (not yet ``MockResource/complete(_:)``d) and the total matching the filters.
    func storedRows(_ resource: MockResource, query: MockQuery) -> (rows: [JSONObject], total: Int) {
        if query.filters.isEmpty && query.sort.isEmpty {
            // In primary-key order with neither filter nor sort: a page costs its own size, not the table's.
            return tables.withLock { tables in
                guard let table = tables[resource.name] else { return ([], 0) }
                let start = min(query.offset, table.order.count)
                let end = query.limit.map { min(start + $0, table.order.count) } ?? table.order.count
                return (Array(table.orderedRows[start..<end]), table.orderedRows.count)
            }
        }
        var matching: [JSONObject] = tables.withLock { tables in
            guard let table = tables[resource.name] else { return [] }
            return table.orderedRows.filter { object in
                query.filters.allSatisfy { MockValueOrder.equal(object[$0.property] ?? .null, $0.value) }
            }
        }
        if !query.sort.isEmpty {
            let key = resource.primaryKey
            matching.sort { a, b in
                for sortKey in query.sort {
                    let order = MockValueOrder.compare(a[sortKey.property] ?? .null, b[sortKey.property] ?? .null)
                    if order != 0 { return sortKey.descending ? order > 0 : order < 0 }
                }
                return MockValueOrder.compare(key.key(of: a) ?? .null, key.key(of: b) ?? .null) < 0
            }
        }
        let start = min(query.offset, matching.count)
        let end = query.limit.map { min(start + $0, matching.count) } ?? matching.count
        return (Array(matching[start..<end]), matching.count)
    }

    /// The rows of a page without filter or sort as they go on the wire (``MockRowBytes``), and the total;
    /// nil when the table keeps no bytes for `resource`'s properties (the rows are rendered instead).
    func storedBytes(_ resource: MockResource, query: MockQuery) -> (page: MockRowBytes.Page, total: Int)? {
        guard query.filters.isEmpty && query.sort.isEmpty else { return nil }
        return tables.withLock { tables in
            guard let table = tables[resource.name], let bytes = table.bytes, bytes.renders(resource),
                  bytes.count == table.order.count else { return nil }
            let start = min(query.offset, table.order.count)
            let end = query.limit.map { min(start + $0, table.order.count) } ?? table.order.count
            return (bytes.page(start..<end), table.order.count)
        }
    }

    public func create(_ resource: MockResource, values: JSONObject) async throws -> JSONObject {
        let values = try resource.assigningKey(to: values)
        let result: Result<JSONObject, MockHTTPError> = tables.withLock { tables in
            // Taken out while it changes, so that the change does not copy the whole table.
            var table = tables.removeValue(forKey: resource.name) ?? Table()
            defer { tables[resource.name] = table }
            return table.insert(values, resource: resource)
        }
        return resource.complete(try result.get())
    }

    public func modify(_ resource: MockResource, id: JSONValue, values: JSONObject) async throws -> JSONObject? {
        let updated: JSONObject? = tables.withLock { tables in
            // Taken out while it changes, so that the change does not copy the whole table.
            guard var table = tables.removeValue(forKey: resource.name) else { return nil }
            defer { tables[resource.name] = table }
            return table.merge(values, into: id, resource: resource)
        }
        return updated.map(resource.complete)
    }

    /// Objects in batches under the lock (as the one-by-one `modify` or `create` of the protocol's default, without
    /// completing each object for an answer): a bulk load costs the rows, not the calls.
    ///
    /// ```swift
    /// let stored = try await store.upsert(people, objects: [["id": 1, "name": "ann"], ["name": "bob"]])   // 2
    /// ```
    public func upsert(_ resource: MockResource, objects: [JSONObject]) async throws -> Int {
        let key = resource.primaryKey
        var start = objects.startIndex
        while start < objects.endIndex {
            let end = min(start + Self.upsertBatch, objects.endIndex)
            let failure: (any Error)? = tables.withLock { tables in
                // Taken out while it changes, so that the change does not copy the whole table.
                var table = tables.removeValue(forKey: resource.name) ?? Table()
                defer { tables[resource.name] = table }
                for values in objects[start..<end] {
                    if let id = key.key(of: values), table.merge(values, into: id, resource: resource) != nil { continue }
                    do {
                        // As `create`: the objects before a failing one stay stored.
                        if case .failure(let error) = table.insert(try resource.assigningKey(to: values), resource: resource) { return error }
                    } catch {
                        return error
                    }
                }
                return nil
            }
            if let failure { throw failure }
            start = end
        }
        return objects.count
    }

    /// Objects stored by ``upsert(_:objects:)`` under one hold of the lock (readers wait no longer than that).
    static let upsertBatch = 1_024

    public func delete(_ resource: MockResource, id: JSONValue) async throws -> Bool {
        tables.withLock { tables in
            guard tables[resource.name]?.rows.removeValue(forKey: id) != nil else { return false }
            guard var table = tables.removeValue(forKey: resource.name) else { return false }
            defer { tables[resource.name] = table }
            if let index = table.index(of: id) {
                table.order.remove(at: index)
                table.orderedRows.remove(at: index)
                table.bytes?.remove(at: index)
            }
            return true
        }
    }
}

/// A total order over JSON values for sorting: null < booleans < numbers < strings < other.
enum MockValueOrder {
    private static func rank(_ value: JSONValue) -> Int {
        switch value {
        case .null: return 0
        case .bool: return 1
        case .int, .double, .bigInteger: return 2
        case .string: return 3
        case .array: return 4
        case .object: return 5
        }
    }

    /// -1, 0 or 1.
    static func compare(_ a: JSONValue, _ b: JSONValue) -> Int {
        let (ra, rb) = (rank(a), rank(b))
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a, b) {
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (!x ? -1 : 1)
        case (.int(let x), .int(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.string(let x), .string(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.array(let x), .array(let y)):
            // Element by element (composite keys: owner, then repo, then ref), the shorter first on a tie.
            for (a, b) in zip(x, y) {
                let order = compare(a, b)
                if order != 0 { return order }
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        default:
            if let x = a.doubleValue, let y = b.doubleValue { return x == y ? 0 : (x < y ? -1 : 1) }
            let (x, y) = (a.serialized(), b.serialized())
            return x == y ? 0 : (x < y ? -1 : 1)
        }
    }

    /// Equality with 2 == 2.0.
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        a == b || compare(a, b) == 0 && rank(a) == 2
    }
}
