import Foundation

/// What samples showed of one kind of object (a route's objects, or the objects nested under one
/// key): every key seen, in first-seen order, and what its values were. Memory is bounded by the
/// keys, not the objects: values are counted, never kept, except the hashes of the values of keys
/// that could be a primary key, to tell whether they are unique.
final class ObjectShape {
    /// Objects observed.
    var count = 0
    /// Keys in the order they were first seen.
    private(set) var order: [String] = []
    private(set) var fields: [String: FieldShape] = [:]
    /// Whether key uniqueness is tracked (a route's objects; nested objects repeat by nature).
    let tracksUniqueness: Bool

    init(tracksUniqueness: Bool) {
        self.tracksUniqueness = tracksUniqueness
    }

    /// The field of `key`, made on first sight.
    func field(_ key: String, pointer: JSONPointer) -> FieldShape {
        if let field = fields[key] { return field }
        let field = FieldShape(firstPointer: pointer, tracksUniqueness: tracksUniqueness && FieldShape.couldBeKey(key))
        fields[key] = field
        order.append(key)
        return field
    }

    /// Every field, in first-seen order.
    var orderedFields: [(key: String, field: FieldShape)] {
        order.compactMap { key in fields[key].map { (key: key, field: $0) } }
    }

    /// Records one object found at `pointer`.
    func observe(_ object: JSONObject, at pointer: JSONPointer) {
        count += 1
        for (key, value) in object {
            field(key, pointer: (pointer / key)).observe(value, at: (pointer / key))
        }
    }

    /// Adds what `other` observed (the same kind of object seen elsewhere: `user` under issues and
    /// under comments).
    func merge(_ other: ObjectShape) {
        count += other.count
        for (key, field) in other.orderedFields {
            if let mine = fields[key] {
                mine.merge(field)
            } else {
                fields[key] = field
                order.append(key)
            }
        }
    }
}

/// What samples showed of one key's values.
final class FieldShape {
    var present = 0
    var nulls = 0
    var integers = 0
    var doubles = 0
    var bools = 0
    var strings = 0
    /// Strings that read as ISO 8601 dates (all of them when `dates == strings`).
    var dates = 0
    var objects = 0
    var arrays = 0
    /// The objects under this key, merged.
    var object: ObjectShape?
    /// The objects inside arrays under this key, merged.
    var element: ObjectShape?
    /// Array elements that are not objects.
    var scalarElements = 0
    /// Where the key was first seen.
    let firstPointer: JSONPointer
    /// Where a value first broke the pattern of the others (for notes), and where one was null.
    var firstNull: JSONPointer?
    /// Hashes of the values seen, while they are all distinct; nil when not tracked or once a
    /// value repeated.
    private var hashes: Set<Int>?
    private(set) var repeated = false

    init(firstPointer: JSONPointer, tracksUniqueness: Bool) {
        self.firstPointer = firstPointer
        hashes = tracksUniqueness ? [] : nil
    }

    /// Whether every value seen was distinct (only known for tracked keys).
    var isUnique: Bool { hashes != nil && !repeated }

    /// Keys that name identities in public APIs: `id`, `*_id`, `login`, `slug`…
    static func couldBeKey(_ key: String) -> Bool {
        let lower = key.lowercased()
        if ["id", "uuid", "guid", "key", "login", "slug", "name", "ref", "sha", "number", "code", "handle", "username", "email"]
            .contains(lower) { return true }
        return lower.hasSuffix("_id") || key.hasSuffix("Id") || key.hasSuffix("ID")
    }

    func observe(_ value: JSONValue, at pointer: JSONPointer) {
        present += 1
        switch value {
        case .null:
            nulls += 1
            if firstNull == nil { firstNull = pointer }
            return
        case .int, .bigInteger: integers += 1
        case .double: doubles += 1
        case .bool: bools += 1
        case .string(let text):
            strings += 1
            if ISO8601.seconds(text.utf8) != nil { dates += 1 }
        case .object(let members):
            objects += 1
            let shape = object ?? ObjectShape(tracksUniqueness: false)
            object = shape
            shape.observe(members, at: pointer)
        case .array(let items):
            arrays += 1
            for (index, item) in items.enumerated() {
                if case .object(let members) = item {
                    let shape = element ?? ObjectShape(tracksUniqueness: false)
                    element = shape
                    shape.observe(members, at: (pointer / index))
                } else {
                    scalarElements += 1
                }
            }
        }
        if hashes != nil, !repeated {
            if hashes?.insert(value.hashValue).inserted == false {
                repeated = true
                hashes = []
            }
        }
    }

    func merge(_ other: FieldShape) {
        present += other.present
        nulls += other.nulls
        integers += other.integers
        doubles += other.doubles
        bools += other.bools
        strings += other.strings
        dates += other.dates
        objects += other.objects
        arrays += other.arrays
        scalarElements += other.scalarElements
        if firstNull == nil { firstNull = other.firstNull }
        if let theirs = other.object {
            if let mine = object { mine.merge(theirs) } else { object = theirs }
        }
        if let theirs = other.element {
            if let mine = element { mine.merge(theirs) } else { element = theirs }
        }
        // Merged shapes are nested ones, which do not track uniqueness.
        hashes = nil
    }

    /// Kinds of non-null values seen: scalars, objects, arrays.
    var isOnlyObjects: Bool { objects > 0 && objects + nulls == present }
    var isOnlyArrays: Bool { arrays > 0 && arrays + nulls == present }
    var scalarCount: Int { integers + doubles + bools + strings }
}
