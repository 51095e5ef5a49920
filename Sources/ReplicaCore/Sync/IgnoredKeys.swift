/// A JSON key an import did not store: one that matched no attribute or relationship, a MANY
/// collection that matched no entity, or a key given twice in one object (the last one won).
///
/// ```swift
/// for key in result.ignoredKeys { print(key) }   // Person.userId × 1,000 (first at /0/userId)
/// ```
public struct IgnoredKey: Sendable, Hashable, CustomStringConvertible {
    /// Why the key was not stored.
    public enum Kind: String, Sendable, Hashable {
        /// It matched no attribute or relationship of the entity: its value was dropped.
        case unknownKey
        /// A collection of a MANY response whose key names no entity: its objects were dropped.
        case unknownCollection
        /// An object whose discriminator (JSON:API's `type`) names no entity of the route: it was
        /// not stored. `key` is the type (`tags`), or `(none)` for an object without one.
        case unknownType
        /// The object gave the key more than once; the last value was stored.
        case duplicateKey
        /// Two parents nested one child through a one-to-many relationship under
        /// ``SharedChildPolicy/lastParentWins``: `key` is the child's to-one relationship back
        /// (`Label.issue`), and the last parent's claim was stored.
        case sharedChild

        /// `true` for the kinds whose value was dropped (an unknown key, collection or type),
        /// `false` for those stored all the same (a duplicate key, a shared child).
        public var dropsValue: Bool {
            switch self {
            case .unknownKey, .unknownCollection, .unknownType: return true
            case .duplicateKey, .sharedChild: return false
            }
        }
    }

    /// Why the key was not stored.
    public var kind: Kind
    /// The entity whose objects held it; `nil` for a collection.
    public var entity: String?
    /// The key; nested key paths joined with dots (`address.zip`).
    public var key: String
    /// How many times it occurred.
    public var count: Int
    /// Where it first occurred.
    public var example: JSONPointer
    /// What it first occurred in: the file, or the request of a page (`GET https://api.example.com/issues?page=2`);
    /// `nil` when not known.
    public var source: String? = nil

    public var description: String {
        let name = entity.map { "\($0).\(key)" } ?? key
        let what: String
        switch kind {
        case .unknownKey: what = ""
        case .unknownCollection: what = "collection "
        case .unknownType: what = "type "
        case .duplicateKey: what = "duplicate "
        case .sharedChild: what = "shared child "
        }
        return "\(what)\(name) × \(count) (first at \(example.components.isEmpty ? "/" : example.description))"
    }
}

/// The ignored keys of one response or session, counted as objects are mapped. The fast path
/// finds a key's entry by its bytes without allocating; at most ``distinctLimit`` distinct keys
/// are named, the rest only counted.
struct IgnoredKeyTally: Sendable {
    struct Entry: Sendable {
        /// The entity index, or -1 for a MANY collection.
        var entity: Int
        var kind: IgnoredKey.Kind
        var key: [UInt8]
        var count: Int
        var example: JSONPointer?
        var source: String?
    }

    /// The most distinct keys named; occurrences of others are counted in ``unnamedCount``.
    static let distinctLimit = 512
    private(set) var entries: [Entry] = []
    /// Occurrences of unknown keys and collections (not duplicates), named or not.
    private(set) var ignoredCount = 0
    /// Every occurrence, duplicates included.
    private(set) var total = 0
    /// Occurrences of unknown keys and collections past the distinct limit, which are not named.
    private(set) var unnamedCount = 0

    /// The index of the entry for these key bytes, made when new; `nil` past the distinct limit.
    mutating func entry(entity: Int, kind: IgnoredKey.Kind, key: UnsafeRawBufferPointer) -> Int? {
        for index in entries.indices where entries[index].entity == entity && entries[index].kind == kind
            && entries[index].key.count == key.count && entries[index].key.elementsEqual(key) {
            return index
        }
        guard entries.count < Self.distinctLimit else { return nil }
        entries.append(Entry(entity: entity, kind: kind, key: Array(key), count: 0, example: nil, source: nil))
        return entries.count - 1
    }

    /// Counts one occurrence of the entry at `index` (or of an unnamed key when `nil`) found at `pointer`.
    mutating func count(_ index: Int?, kind: IgnoredKey.Kind, at pointer: @autoclosure () -> JSONPointer) {
        total += 1
        let ignored = kind.dropsValue
        if ignored { ignoredCount += 1 }
        guard let index else {
            if ignored { unnamedCount += 1 }
            return
        }
        entries[index].count += 1
        if entries[index].example == nil { entries[index].example = pointer() }
    }

    /// Counts one occurrence of `key` found at `pointer` (the general path).
    mutating func record(entity: Int, kind: IgnoredKey.Kind, key: String, at pointer: JSONPointer) {
        var key = key
        let index = key.withUTF8 { entry(entity: entity, kind: kind, key: UnsafeRawBufferPointer($0)) }
        count(index, kind: kind, at: pointer)
    }

    /// Whether the entry at `index` has no example pointer yet.
    func needsExample(_ index: Int) -> Bool { entries[index].example == nil }

    /// The key of an entry, as text.
    func key(_ index: Int) -> String { String(decoding: entries[index].key, as: UTF8.self) }

    /// Adds another response's tally.
    mutating func merge(_ other: IgnoredKeyTally) {
        for entry in other.entries where entry.count > 0 {
            let index = entry.key.withUnsafeBytes { self.entry(entity: entry.entity, kind: entry.kind, key: $0) }
            if let index {
                entries[index].count += entry.count
                if entries[index].example == nil {
                    entries[index].example = entry.example
                    entries[index].source = entry.source
                }
            } else if entry.kind.dropsValue {
                unnamedCount += entry.count
            }
        }
        total += other.total
        ignoredCount += other.ignoredCount
        unnamedCount += other.unnamedCount
    }

    /// Names `source` as where the keys counted so far without one occurred (a response's reader
    /// calls it once it has read the response).
    mutating func setSource(_ source: String) {
        for index in entries.indices where entries[index].source == nil && entries[index].count > 0 {
            entries[index].source = source
        }
    }

    /// The named keys, most frequent first.
    func keys(entityNames: [String]) -> [IgnoredKey] {
        entries.filter { $0.count > 0 }.map { entry in
            IgnoredKey(kind: entry.kind, entity: entry.entity >= 0 ? entityNames[entry.entity] : nil,
                       key: String(decoding: entry.key, as: UTF8.self), count: entry.count,
                       example: entry.example ?? JSONPointer(components: []), source: entry.source)
        }.sorted { ($0.count, $1.key) > ($1.count, $0.key) }
    }
}

extension IgnoredKey {
    /// Keys listed by entity, each with its count and first pointer, in the order given:
    /// `Issue: url × 30 (first at /0/url), node_id × 30 (first at /0/node_id); User: gravatar_id × 1 (first at /0/user/gravatar_id)`.
    /// Collections are listed as `collection gadgets × 2 (first at /gadgets)`.
    ///
    /// ```swift
    /// IgnoredKey.grouped(result.ignoredKeys.filter { $0.kind == .unknownKey })
    /// ```
    ///
    /// - Parameter keys: The keys, most frequent first.
    /// - Returns: One text; empty for no keys.
    public static func grouped(_ keys: [IgnoredKey]) -> String {
        var order: [String?] = []
        var byEntity: [String?: [IgnoredKey]] = [:]
        for key in keys {
            if byEntity[key.entity] == nil { order.append(key.entity) }
            byEntity[key.entity, default: []].append(key)
        }
        return order.map { entity in
            let items = (byEntity[entity] ?? []).map { key -> String in
                let place = key.example.components.isEmpty ? "/" : key.example.description
                let what = key.kind == .unknownCollection ? "collection " : key.kind == .unknownType ? "type " : ""
                return "\(what)\(key.key) × \(key.count) (first at \(place))"
            }.joined(separator: ", ")
            return entity.map { "\($0): \(items)" } ?? items
        }.joined(separator: "; ")
    }
}
