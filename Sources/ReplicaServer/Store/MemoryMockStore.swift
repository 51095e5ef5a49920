import Foundation
import NIOConcurrencyHelpers

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
        var nextID: Int64 = 1

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

    private let tables = NIOLockedValueBox<[String: Table]>([:])

    /// Creates an empty store.
    ///
    /// ```swift
    /// let store = MemoryMockStore()
    /// ```
    public init() {}

    public func addResource(_ resource: MockResource) async throws {
        tables.withLockedValue { tables in
            if tables[resource.name] == nil { tables[resource.name] = Table() }
        }
    }

    public func dropResource(_ resource: MockResource) async throws {
        _ = tables.withLockedValue { $0.removeValue(forKey: resource.name) }
    }

    public func object(_ resource: MockResource, id: JSONValue) async throws -> JSONObject? {
        tables.withLockedValue { $0[resource.name]?.rows[id] }.map(resource.complete)
    }

    public func objects(_ resource: MockResource, query: MockQuery) async throws -> MockPage {
        let (rows, total) = storedRows(resource, query: query)
        return MockPage(objects: rows.map(resource.complete), total: total)
    }

    /// The rows of a page as stored (not yet ``MockResource/complete(_:)``d) and the total matching the filters.
    func storedRows(_ resource: MockResource, query: MockQuery) -> (rows: [JSONObject], total: Int) {
        if query.filters.isEmpty && query.sort.isEmpty {
            // In primary-key order with neither filter nor sort: a page costs its own size, not the table's.
            return tables.withLockedValue { tables in
                guard let table = tables[resource.name] else { return ([], 0) }
                let start = min(query.offset, table.order.count)
                let end = query.limit.map { min(start + $0, table.order.count) } ?? table.order.count
                return (Array(table.orderedRows[start..<end]), table.orderedRows.count)
            }
        }
        var matching: [JSONObject] = tables.withLockedValue { tables in
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

    public func create(_ resource: MockResource, values: JSONObject) async throws -> JSONObject {
        let key = resource.primaryKey
        let values = try resource.assigningKey(to: values)
        let result: Result<JSONObject, MockHTTPError> = tables.withLockedValue { tables in
            // Taken out while it changes, so that the change does not copy the whole table.
            var table = tables.removeValue(forKey: resource.name) ?? Table()
            defer { tables[resource.name] = table }
            var values = values
            let id: JSONValue
            if let given = key.key(of: values) {
                id = given
                if table.rows[id] != nil {
                    return .failure(MockHTTPError(status: 409, code: "conflict",
                                                  message: "\(resource.name) \(id.serialized()) already exists"))
                }
                if key.kind == .autoIncrement, case .int(let n) = id, n >= table.nextID { table.nextID = n + 1 }
            } else {
                // Only an auto-increment key is missing here: `assigningKey` made or required the others.
                id = .int(table.nextID)
                table.nextID += 1
                values[key.name] = id
            }
            table.rows[id] = values
            let position = table.position(of: id)
            table.order.insert(id, at: position)
            table.orderedRows.insert(values, at: position)
            return .success(values)
        }
        return resource.complete(try result.get())
    }

    public func modify(_ resource: MockResource, id: JSONValue, values: JSONObject) async throws -> JSONObject? {
        let primaryKey = resource.primaryKey
        let updated: JSONObject? = tables.withLockedValue { tables in
            // Taken out while it changes, so that the change does not copy the whole table.
            guard var table = tables.removeValue(forKey: resource.name) else { return nil }
            defer { tables[resource.name] = table }
            guard var object = table.rows[id] else { return nil }
            for (key, value) in values where !primaryKey.contains(key) { object[key] = value }
            table.rows[id] = object
            let index = table.position(of: id)
            if index < table.order.count, table.order[index] == id {
                table.orderedRows[index] = object
            } else if let index = table.order.firstIndex(of: id) {
                table.orderedRows[index] = object
            }
            return object
        }
        return updated.map(resource.complete)
    }

    public func delete(_ resource: MockResource, id: JSONValue) async throws -> Bool {
        tables.withLockedValue { tables in
            guard tables[resource.name]?.rows.removeValue(forKey: id) != nil else { return false }
            guard var table = tables.removeValue(forKey: resource.name) else { return false }
            defer { tables[resource.name] = table }
            let index = table.position(of: id)
            if index < table.order.count, table.order[index] == id {
                table.order.remove(at: index)
                table.orderedRows.remove(at: index)
            } else if let index = table.order.firstIndex(of: id) {
                table.order.remove(at: index)
                table.orderedRows.remove(at: index)
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
