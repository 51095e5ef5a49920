/// The primary keys of one kind of change, stored compactly (integers, strings, or the tuples
/// of composite keys).
///
/// A composite key (an entity whose ``Entity/primaryKeyNames`` has several attributes) is kept as
/// its parts in ``tuples`` and read back as ``AttributeValue/compositeKey(_:)``.
///
/// ```swift
/// let keys = changes["Post"]?.inserted ?? PrimaryKeys()
/// keys.count          // 3
/// keys.contains(.integer(7))
/// changes["Ref"]?.inserted.tuples   // [[.string("octocat"), .string("Hello-World"), .string("refs/heads/main")]]
/// changes["Ref"]?.inserted.contains(.compositeKey([.string("octocat"), .string("Hello-World"), .string("refs/heads/main")]))
/// ```
public struct PrimaryKeys: Sendable, Hashable, Sequence, CustomStringConvertible {
    /// The integer keys, in order.
    public package(set) var integers: [Int64] = []
    /// The text keys, in order.
    public package(set) var strings: [String] = []
    /// The composite keys, in order: each the parts of one key, in ``Entity/primaryKeyNames`` order.
    public package(set) var tuples: [[AttributeValue]] = []

    public init() {}

    /// Keys from attribute values (integers, strings and ``AttributeValue/compositeKey(_:)`` tuples;
    /// other values are stored as text).
    public init(_ values: [AttributeValue]) {
        for value in values { append(value) }
    }

    /// The number of keys.
    public var count: Int { integers.count + strings.count + tuples.count }
    public var isEmpty: Bool { integers.isEmpty && strings.isEmpty && tuples.isEmpty }

    /// The keys as attribute values: integers first, then strings, then composite keys.
    public var values: [AttributeValue] {
        let single = integers.map { AttributeValue.integer($0) } + strings.map { .string($0) }
        return tuples.isEmpty ? single : single + tuples.map { .compositeKey($0) }
    }

    public func makeIterator() -> IndexingIterator<[AttributeValue]> { values.makeIterator() }

    /// Whether `key` is one of the keys (linear; build a `Set` for many lookups).
    public func contains(_ key: AttributeValue) -> Bool {
        switch key {
        case .integer(let i): return integers.contains(i)
        case .string(let s): return strings.contains(s)
        default:
            if let parts = key.compositeKeyParts { return tuples.contains(parts) }
            return strings.contains(key.description)
        }
    }

    package mutating func append(_ key: AttributeValue) {
        switch key {
        case .integer(let i): integers.append(i)
        case .string(let s): strings.append(s)
        default:
            if let parts = key.compositeKeyParts { tuples.append(parts) } else { strings.append(key.description) }
        }
    }

    /// Removes duplicates and the keys in `excluded`, keeping first occurrences in order.
    package mutating func normalize(excluding excluded: PrimaryKeys = PrimaryKeys()) {
        integers = Self.unique(integers, excluding: excluded.integers)
        strings = Self.unique(strings, excluding: excluded.strings)
        if !tuples.isEmpty {
            var seen = Set(excluded.tuples)
            tuples = tuples.filter { seen.insert($0).inserted }
        }
    }

    static func unique<T: Hashable & Comparable>(_ keys: [T], excluding excluded: [T]) -> [T] {
        if keys.isEmpty { return keys }
        if excluded.isEmpty, zip(keys, keys.dropFirst()).allSatisfy({ $0 < $1 }) { return keys }
        var seen = Set(excluded)
        return keys.filter { seen.insert($0).inserted }
    }

    /// Sorts the composite keys part by part (integers before text, text by its UTF-8 bytes), so
    /// that a change set read back from a store without order reads the same each time.
    package mutating func sortTuples() {
        func precedes(_ a: AttributeValue, _ b: AttributeValue) -> Bool? {
            switch (a, b) {
            case (.integer(let x), .integer(let y)): return x == y ? nil : x < y
            case (.string(let x), .string(let y)):
                if x == y { return nil }
                return x.utf8.lexicographicallyPrecedes(y.utf8)
            case (.integer, _): return true
            case (_, .integer): return false
            default:
                let (x, y) = (a.description, b.description)
                return x == y ? nil : x.utf8.lexicographicallyPrecedes(y.utf8)
            }
        }
        tuples.sort { a, b in
            for (x, y) in zip(a, b) { if let result = precedes(x, y) { return result } }
            return a.count < b.count
        }
    }

    /// Whether some key occurs more than once.
    package var hasDuplicates: Bool {
        if integers.count > 1 {
            if !zip(integers, integers.dropFirst()).allSatisfy({ $0 < $1 }) {
                var sorted = integers
                sorted.sort()
                if zip(sorted, sorted.dropFirst()).contains(where: { $0 == $1 }) { return true }
            }
        }
        return Set(strings).count != strings.count || Set(tuples).count != tuples.count
    }

    public var description: String { "[" + values.map(\.description).joined(separator: ", ") + "]" }
}

/// What one transaction did to one entity.
public struct EntityChanges: Sendable, Hashable, CustomStringConvertible {
    /// Keys of rows that did not exist before.
    public var inserted = PrimaryKeys()
    /// Keys of rows whose stored values changed.
    public var updated = PrimaryKeys()
    /// Keys of rows deleted (stale rows of a scope).
    public var deleted = PrimaryKeys()
    /// Rows whose primary key changed: a row saved locally under a temporary key
    /// (``ReplicaStore/saveLocally(_:_:)``) that took the API's key when the API confirmed its
    /// create. Each such row is listed in ``updated`` under its new key; its old key is not in
    /// ``deleted`` and its new key is not in ``inserted``, so that observers see one row that
    /// changed, not one that left and another that came.
    ///
    /// ```swift
    /// for change in changes["Todo"]?.rekeyed ?? [] {
    ///     print(change.from, "is now", change.to)   // -1 is now 201
    /// }
    /// ```
    public var rekeyed: [KeyChange] = []
    /// `true` when the rows changed in ways Replica did not see (another process wrote the file):
    /// observers must re-read the entity.
    public var isUnknown = false

    public init() {}

    /// `true` when nothing changed.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && rekeyed.isEmpty && !isUnknown }

    public var description: String {
        if isUnknown { return "unknown changes" }
        let counts = "\(inserted.count) inserted, \(updated.count) updated, \(deleted.count) deleted"
        return rekeyed.isEmpty ? counts : counts + ", \(rekeyed.count) rekeyed"
    }
}

/// A row's primary key that changed in a transaction: the temporary key a local create was
/// given, and the key the API gave the row when it confirmed the create.
///
/// ```swift
/// let change = KeyChange(from: .integer(-1), to: .integer(201))
/// print(change)   // -1 → 201
/// ```
public struct KeyChange: Sendable, Hashable, CustomStringConvertible {
    /// The key the row had before the transaction.
    public var from: AttributeValue
    /// The key the row has after it.
    public var to: AttributeValue

    /// A key change of one row.
    ///
    /// - Parameters:
    ///   - from: The key before.
    ///   - to: The key after.
    public init(from: AttributeValue, to: AttributeValue) {
        self.from = from
        self.to = to
    }

    public var description: String { "\(from) → \(to)" }
}

/// Everything one committed transaction changed, entity by entity, published to change observers.
///
/// ```swift
/// engine.addObserver(queue: .main) { changes in
///     if let posts = changes["Post"] { print(changes.sequence, posts.inserted) }
/// }
/// ```
public struct ChangeSet: Sendable, Hashable, CustomStringConvertible {
    /// The transaction's sequence number: increasing in commit order, per engine.
    public var sequence: UInt64
    /// The changes per entity name; entities that did not change are absent.
    public var entities: [String: EntityChanges]
    /// When the change set was published (right after its commit), for the commit-to-diff latency
    /// of live result sets; not part of its value (equality and hashing ignore it).
    package var committedAt: ContinuousClock.Instant?

    public init(sequence: UInt64 = 0, entities: [String: EntityChanges] = [:]) {
        self.sequence = sequence
        self.entities = entities
    }

    public static func == (lhs: ChangeSet, rhs: ChangeSet) -> Bool {
        lhs.sequence == rhs.sequence && lhs.entities == rhs.entities
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(sequence)
        hasher.combine(entities)
    }

    /// The changes of `entity`, or `nil` when it did not change.
    public subscript(entity: String) -> EntityChanges? { entities[entity] }

    /// `true` when the transaction changed nothing.
    public var isEmpty: Bool { entities.values.allSatisfy(\.isEmpty) }

    /// The names of the entities that changed.
    public var changedEntities: Set<String> { Set(entities.filter { !$0.value.isEmpty }.keys) }

    public var description: String {
        let parts = entities.keys.sorted().compactMap { name -> String? in
            guard let changes = entities[name], !changes.isEmpty else { return nil }
            return "\(name): \(changes)"
        }
        return "#\(sequence) " + (parts.isEmpty ? "no changes" : parts.joined(separator: "; "))
    }
}

extension PrimaryKeys {
    /// Adds the keys of `other` (an empty set takes `other`'s storage instead of copying it, and
    /// adding nothing leaves shared storage unshared: no copy).
    public mutating func formUnion(_ other: PrimaryKeys) {
        if integers.isEmpty { integers = other.integers } else if !other.integers.isEmpty { integers += other.integers }
        if strings.isEmpty { strings = other.strings } else if !other.strings.isEmpty { strings += other.strings }
        if !other.tuples.isEmpty { tuples += other.tuples }
    }
}
