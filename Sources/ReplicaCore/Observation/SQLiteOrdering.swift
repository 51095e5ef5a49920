import Foundation

/// Compares attribute values and rows exactly as SQLite's `ORDER BY` does for the store's columns,
/// so that rows fetched separately can be merged into a sorted result.
///
/// Storage classes order NULL < numbers < text < blob; integers and reals compare numerically
/// (bools are 0/1, dates Unix seconds); text compares by bytes (the BINARY collation); blobs by
/// `memcmp`. JSON text is not reproducible from parsed values, so queries sorting by a `json`
/// attribute are always re-run instead of merged (see ``RowOrder/isReproducible``).
enum SQLiteOrdering {
    /// -1, 0 or 1.
    static func compare(_ a: AttributeValue, _ b: AttributeValue) -> Int {
        let (ra, rb) = (rank(a), rank(b))
        if ra != rb { return ra < rb ? -1 : 1 }
        switch ra {
        case 0:
            return 0
        case 1:
            return compareNumbers(a, b)
        case 2:
            var (x, y) = (text(a), text(b))
            // The bytes in place: no array per comparison (a million-row merge makes many).
            return x.withUTF8 { left in
                y.withUTF8 { right in compareBytes(UnsafeRawBufferPointer(left), UnsafeRawBufferPointer(right)) }
            }
        default:
            return compareBytes(blob(a), blob(b))
        }
    }

    static func rank(_ value: AttributeValue) -> Int {
        switch value {
        case .null: return 0
        case .integer, .double, .bool, .date: return 1
        case .string, .json: return 2
        case .data: return 3
        }
    }

    enum Number { case int(Int64), real(Double) }

    static func number(_ value: AttributeValue) -> Number {
        switch value {
        case .integer(let i): return .int(i)
        case .bool(let b): return .int(b ? 1 : 0)
        case .double(let d): return .real(d)
        case .date(let d): return .real(d.timeIntervalSince1970)
        default: return .int(0)
        }
    }

    static func compareNumbers(_ a: AttributeValue, _ b: AttributeValue) -> Int {
        switch (number(a), number(b)) {
        case (.int(let x), .int(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.real(let x), .real(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.int(let x), .real(let y)): return compareIntReal(x, y)
        case (.real(let x), .int(let y)): return -compareIntReal(y, x)
        }
    }

    /// Exact comparison of an integer with a real, as SQLite does it.
    static func compareIntReal(_ i: Int64, _ r: Double) -> Int {
        if r.isNaN { return 1 }
        if r >= 9_223_372_036_854_775_808.0 { return -1 }
        if r < -9_223_372_036_854_775_808.0 { return 1 }
        let truncated = Int64(r.rounded(.towardZero))
        if i != truncated { return i < truncated ? -1 : 1 }
        let fraction = r - r.rounded(.towardZero)
        return fraction > 0 ? -1 : (fraction < 0 ? 1 : 0)
    }

    static func text(_ value: AttributeValue) -> String {
        switch value {
        case .string(let s): return s
        case .json(let json): return json.serialized()
        default: return ""
        }
    }

    static func blob(_ value: AttributeValue) -> [UInt8] {
        if case .data(let bytes) = value { return bytes }
        return []
    }

    /// -1, 0 or 1 as `memcmp` orders the bytes, a shorter prefix first.
    static func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let count = min(a.count, b.count)
        if count > 0, let x = a.baseAddress, let y = b.baseAddress {
            let result = memcmp(x, y, count)
            if result != 0 { return result < 0 ? -1 : 1 }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    static func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
        let count = min(a.count, b.count)
        var index = 0
        while index < count {
            let (x, y) = (a[index], b[index])
            if x != y { return x < y ? -1 : 1 }
            index += 1
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }
}

/// The total order of a query's rows: its effective sort keys, then the primary key ascending.
struct RowOrder: Sendable {
    struct Term: Sendable {
        var index: Int
        var ascending: Bool
    }

    /// Attribute positions and directions, in order; ends with the primary key.
    let terms: [Term]
    /// `false` when a sort attribute's stored text cannot be rebuilt from its value (json).
    let isReproducible: Bool

    /// - Throws: ``StoreError/Code/unknownAttribute`` for a sort key the entity lacks.
    init(entity: Entity, sort: [SortKey]) throws {
        var terms: [Term] = []
        var reproducible = true
        let names = entity.attributes.map(\.name)
        for key in sort {
            guard let index = names.firstIndex(of: key.attribute) else {
                throw StoreError(.unknownAttribute, "cannot sort by '\(key.attribute)': entity '\(entity.name)' has "
                                 + names.joined(separator: ", "))
            }
            if entity.attributes[index].type == .json { reproducible = false }
            terms.append(Term(index: index, ascending: key.ascending))
        }
        // Then every part of the primary key the sort left out (a composite key's in key order).
        for part in entity.primaryKeyNames where !sort.contains(where: { $0.attribute == part }) {
            terms.append(Term(index: names.firstIndex(of: part) ?? 0, ascending: true))
        }
        self.terms = terms
        self.isReproducible = reproducible
    }

    /// -1, 0 or 1; 0 only for rows with the same primary key and sort values.
    func compare(_ a: EntityRow, _ b: EntityRow) -> Int {
        for term in terms {
            let result = SQLiteOrdering.compare(a.values[term.index], b.values[term.index])
            if result != 0 { return term.ascending ? result : -result }
        }
        return 0
    }
}
