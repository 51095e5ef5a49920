/// What an import does with the keys of an object that match no attribute or relationship
/// (`"unmappedKeys"` in a schema file, schema-wide or per entity; the entity's wins).
///
/// ```swift
/// var issue = Entity("Issue") { Attribute("id", .integer); Attribute("title", .string) }
/// issue.unmappedKeys = .keep        // the other keys go, as JSON, into the column `unmapped`
/// ```
public enum UnmappedKeyPolicy: String, Sendable, Hashable, CaseIterable {
    /// Count them and warn, naming each key (the default). `--strict` makes them errors.
    case warn
    /// Drop them without a word.
    case ignore
    /// Store them, as one compact JSON object per row, in a JSON column of the entity's own
    /// (``Entity/unmappedColumnName``); `NULL` when the object had none.
    case keep
}

/// A glob of ``Entity/ignoreKeys`` and ``Schema/ignoreKeys``: `*` matches any run of
/// characters (dots included), `?` exactly one; every other character itself.
///
/// A key inside a key-path object (`address.zip`, beside an attribute mapped to `address.city`)
/// is matched both as its full dotted path and as its last component, so `*_url` ignores
/// `user.avatar_url` and `address.*` ignores everything under `address` that is not mapped.
///
/// ```swift
/// KeyGlob("*_url").matches("html_url")          // true
/// KeyGlob("node_?d").matches("node_id")          // true
/// KeyGlob("*_url").matches("owner.avatar_url")   // true (last component)
/// ```
public struct KeyGlob: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as written.
    public let pattern: String
    private let bytes: [UInt8]

    /// Creates a glob from its pattern.
    ///
    /// ```swift
    /// let glob = KeyGlob("*_url")
    /// ```
    ///
    /// - Parameter pattern: The pattern (`*` and `?` are wildcards).
    public init(_ pattern: String) {
        self.pattern = pattern
        self.bytes = Array(pattern.utf8)
    }

    public var description: String { pattern }

    /// Whether `key` (an object key, or a dotted key path) matches: in full, or by its last component.
    ///
    /// ```swift
    /// KeyGlob("*_url").matches("events_url")   // true
    /// ```
    ///
    /// - Parameter key: The JSON key or dotted key path.
    /// - Returns: `true` when the pattern matches.
    public func matches(_ key: String) -> Bool {
        var key = key
        return key.withUTF8 { matches(UnsafeRawBufferPointer($0)) }
    }

    /// Whether the raw UTF-8 bytes of a key match (in full, or by the part after the last dot).
    func matches(_ key: UnsafeRawBufferPointer) -> Bool {
        if Self.match(bytes[...], key[...]) { return true }
        guard let dot = key.lastIndex(of: UInt8(ascii: ".")) else { return false }
        return Self.match(bytes[...], key[(dot + 1)...])
    }

    /// Iterative wildcard matching with one backtrack point (the last `*`); `?` takes one
    /// character, a whole UTF-8 sequence.
    private static func match(_ pattern: ArraySlice<UInt8>, _ text: Slice<UnsafeRawBufferPointer>) -> Bool {
        var p = pattern.startIndex
        var t = text.startIndex
        var star: Int?
        var resume = t
        func width(_ byte: UInt8) -> Int {
            switch byte {
            case 0xF0...: return 4
            case 0xE0...: return 3
            case 0xC0...: return 2
            default: return 1
            }
        }
        while t < text.endIndex {
            if p < pattern.endIndex && pattern[p] == UInt8(ascii: "?") {
                p += 1
                t = Swift.min(text.endIndex, t + width(text[t]))
            } else if p < pattern.endIndex && pattern[p] == UInt8(ascii: "*") {
                star = p
                p += 1
                resume = t
            } else if p < pattern.endIndex && pattern[p] == text[t] {
                p += 1
                t += 1
            } else if let s = star {
                p = s + 1
                resume = Swift.min(text.endIndex, resume + width(text[resume]))
                t = resume
            } else {
                return false
            }
        }
        while p < pattern.endIndex && pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.endIndex
    }
}

extension Entity {
    /// The column of ``UnmappedKeyPolicy/keep`` when not renamed by ``unmappedColumn``.
    public static let defaultUnmappedColumn = "unmapped"

    /// The name of the column that keeps unmapped keys: ``unmappedColumn`` or `unmapped`.
    ///
    /// ```swift
    /// issue.unmappedColumnName   // "unmapped"
    /// ```
    public var unmappedColumnName: String { unmappedColumn ?? Self.defaultUnmappedColumn }

    /// The attribute the schema made for the kept keys, when the entity keeps them.
    ///
    /// ```swift
    /// schema.entity(named: "Issue")?.unmappedAttribute?.name   // "unmapped"
    /// ```
    public var unmappedAttribute: Attribute? { attributes.first(where: \.isUnmappedColumn) }
}

extension Schema {
    /// What `entity` does with its unmapped keys: its own ``Entity/unmappedKeys``, else the schema's.
    ///
    /// ```swift
    /// schema.unmappedKeyPolicy(of: issue)   // .keep
    /// ```
    ///
    /// - Parameter entity: One of the schema's entities.
    /// - Returns: The policy.
    public func unmappedKeyPolicy(of entity: Entity) -> UnmappedKeyPolicy {
        entity.unmappedKeys ?? unmappedKeys
    }

    /// The globs of keys `entity` ignores: the schema's, then the entity's own.
    ///
    /// ```swift
    /// schema.ignoredKeyGlobs(of: issue).map(\.pattern)   // ["*_url", "node_id"]
    /// ```
    ///
    /// - Parameter entity: One of the schema's entities.
    /// - Returns: The globs.
    public func ignoredKeyGlobs(of entity: Entity) -> [KeyGlob] {
        (ignoreKeys + entity.ignoreKeys).map(KeyGlob.init)
    }

    /// Adds (or removes) the JSON attribute of each entity that keeps its unmapped keys, after
    /// dropping any made before: validation runs it, so that equal schemas have equal attributes.
    mutating func synthesizeUnmappedColumns() {
        for index in entities.indices {
            entities[index].attributes.removeAll(where: \.isUnmappedColumn)
            guard unmappedKeyPolicy(of: entities[index]) == .keep else { continue }
            var column = Attribute(entities[index].unmappedColumnName, .json, nullable: true)
            column.isUnmappedColumn = true
            entities[index].attributes.append(column)
        }
    }
}
