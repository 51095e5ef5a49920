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
    /// `order`'s fields and their keys' UTF-8, in the same order: objects of one kind usually list
    /// their keys in one order, so a key read from bytes is matched against the one expected next
    /// without making a `String` or hashing it.
    private var orderFields: [FieldShape] = []
    private var orderUTF8: [[UInt8]] = []
    /// Whether key uniqueness is tracked (a route's objects; nested objects repeat by nature).
    let tracksUniqueness: Bool
    /// Whether the identity-like keys of this shape keep their first values (``FieldShape/values``).
    let keepsValues: Bool
    /// Whether the objects nested under this shape's keys keep theirs: a route's objects do when
    /// its pattern has variables, whose values are compared with them (`owner.login`).
    let nestedKeepValues: Bool

    init(tracksUniqueness: Bool, keepsValues: Bool = false, nestedKeepValues: Bool = false) {
        self.tracksUniqueness = tracksUniqueness
        self.keepsValues = keepsValues
        self.nestedKeepValues = nestedKeepValues
    }

    /// The field of `key`, made on first sight (at `parent / key`).
    func field(_ key: String, in parent: JSONPointer) -> FieldShape {
        if let field = fields[key] { return field }
        let couldBeKey = FieldShape.couldBeKey(key)
        // Values are kept of nested objects' identity-like keys (`owner.login`): what a path variable
        // named after the object is compared with.
        // A route's objects keep the first values of a type-like key (`type`, `kind`): ids that repeat
        // across several of them are objects of several types (``InferenceResolver``'s key).
        let keeps = (couldBeKey && keepsValues) || (tracksUniqueness && FieldShape.couldBeType(key))
        let field = FieldShape(firstPointer: parent / key, tracksUniqueness: tracksUniqueness && couldBeKey,
                               keepsValues: keeps, nestedKeepValues: nestedKeepValues)
        add(field, key: key)
        return field
    }

    private func add(_ field: FieldShape, key: String) {
        fields[key] = field
        order.append(key)
        orderFields.append(field)
        orderUTF8.append(Array(key.utf8))
    }

    /// Observes the object whose `{` `reader` just returned, reading it to its `}` without making
    /// a `JSONValue` (the way a file's or a response's objects are read).
    ///
    /// - Throws: `JSONParseError` for malformed JSON.
    func observe(_ reader: inout JSONReader, at pointer: JSONPointer) throws {
        count += 1
        var next = 0
        while case .key(let name) = try reader.next() {
            let field: FieldShape
            let key: String
            if next < orderFields.count, orderUTF8[next].withUnsafeBytes({ name.equals($0) }) {
                field = orderFields[next]
                key = order[next]
                next += 1
            } else {
                key = name.decoded()
                field = self.field(key, in: pointer)
                next = (order.firstIndex(of: key) ?? order.count - 1) + 1
            }
            try field.observe(&reader, in: pointer, key: key)
        }
    }

    /// Every field, in first-seen order.
    var orderedFields: [(key: String, field: FieldShape)] {
        order.compactMap { key in fields[key].map { (key: key, field: $0) } }
    }

    /// Records one object found at `pointer`.
    func observe(_ object: JSONObject, at pointer: JSONPointer) {
        count += 1
        for (key, value) in object {
            // The value's pointer is made only when a note may need it (a first sight, a first null, nesting).
            field(key, in: pointer).observe(value, in: pointer, key: key)
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
                add(field, key: key)
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
    /// The first distinct values of a key named like an identity (`login`, `id`, `slug`), as text
    /// (integers in decimal), while there are at most ``keptValueLimit`` of them: what a path
    /// variable's value is compared with to learn which attribute it names. Nil when not kept.
    private(set) var values: Set<String>?
    /// Whether more distinct values were seen than ``values`` keeps (it then holds only the first).
    private(set) var valuesOverflowed = false
    /// The most distinct values kept of a key, and the longest value kept (in UTF-8 bytes).
    static let keptValueLimit = 64
    static let keptValueLength = 256

    /// Whether the objects under this key keep the values of their identity-like keys.
    private let nestedKeepValues: Bool

    init(firstPointer: JSONPointer, tracksUniqueness: Bool, keepsValues: Bool = false, nestedKeepValues: Bool = false) {
        self.firstPointer = firstPointer
        hashes = tracksUniqueness ? [] : nil
        values = keepsValues ? [] : nil
        self.nestedKeepValues = nestedKeepValues
    }

    /// Whether `text` is one of the values this key was seen with, as far as they were kept:
    /// `nil` when they were not kept, or when more were seen than kept and `text` is not among them.
    func hasValue(_ text: String) -> Bool? {
        guard let values else { return nil }
        if values.contains(text) { return true }
        return valuesOverflowed ? nil : false
    }

    /// The hashes of the values kept: a value seen again (most are) is recognised by its hash,
    /// without making its text.
    private var valueHashes: Set<Int> = []

    /// Keeps one more value: `hash` feeds its hash, `text` makes its text (only for a new value).
    private func keep(_ hash: (inout Hasher) -> Void, _ text: @autoclosure () -> String) {
        guard values != nil, !valuesOverflowed else { return }
        var hasher = Hasher()
        hash(&hasher)
        guard valueHashes.insert(hasher.finalize()).inserted else { return }
        let value = text()
        guard value.utf8.count <= Self.keptValueLength, (values?.count ?? 0) < Self.keptValueLimit else {
            valuesOverflowed = true
            return
        }
        values?.insert(value)
    }

    /// Keeps a value given by its text (a merged field's).
    private func keep(_ text: String) {
        keep({ $0.combine(text) }, text)
    }

    /// Whether every value seen was distinct (only known for tracked keys).
    var isUnique: Bool { hashes != nil && !repeated }

    /// Keys that name an object's type in public APIs: `type`, `kind`, Stripe's `object`, GraphQL's `__typename`.
    static func couldBeType(_ key: String) -> Bool {
        ["type", "kind", "object", "_type", "__typename", "resource_type", "entity_type", "objecttype"].contains(key.lowercased())
    }

    /// Keys that name identities in public APIs: `id`, `*_id`, `login`, `slug`…
    static func couldBeKey(_ key: String) -> Bool {
        let lower = key.lowercased()
        if ["id", "uuid", "guid", "key", "login", "slug", "name", "ref", "sha", "number", "code", "handle", "username", "email"]
            .contains(lower) { return true }
        return lower.hasSuffix("_id") || key.hasSuffix("Id") || key.hasSuffix("ID")
    }

    /// Records the value of this field's key in the object at `parent`.
    func observe(_ value: JSONValue, in parent: JSONPointer, key: String) {
        switch value {
        case .null: sawNull(parent, key)
        case .int(let number):
            sawInteger { $0.combine(number) }
            keep({ $0.combine(number) }, String(number))
        case .bigInteger(let literal):
            sawInteger { $0.combine(literal) }
            keep(literal)
        case .double(let number): sawDouble { $0.combine(number) }
        case .bool(let flag): sawBool { $0.combine(flag) }
        case .string(let text):
            var text = text
            text.withUTF8 { sawString(UnsafeRawBufferPointer($0)) }
            keep(text)
        case .object(let members):
            nestedObject().observe(members, at: parent / key)
        case .array(let items):
            sawArray()
            let pointer = items.isEmpty ? parent : parent / key
            for (index, item) in items.enumerated() {
                if case .object(let members) = item {
                    elementShape().observe(members, at: pointer / index)
                } else {
                    scalarElements += 1
                }
            }
        }
    }

    /// Reads and records the value of this field's key in the object at `parent` from `reader`
    /// (the key just read): what ``observe(_:in:key:)`` records of the value it would parse.
    func observe(_ reader: inout JSONReader, in parent: JSONPointer, key: String) throws {
        switch try reader.next() {
        case .null: sawNull(parent, key)
        case .number(.int(let number)):
            sawInteger { $0.combine(number) }
            keep({ $0.combine(number) }, String(number))
        case .number(.bigInteger(let literal)):
            sawInteger { $0.combine(literal) }
            keep(String(literal))
        case .number(.double(let number)): sawDouble { $0.combine(number) }
        case .bool(let flag): sawBool { $0.combine(flag) }
        case .string(let text):
            if text.hasEscapes {
                var decoded = text.decoded()
                decoded.withUTF8 { sawString(UnsafeRawBufferPointer($0)) }
                keep(decoded)
            } else {
                sawString(text.rawBytes)
                keep({ $0.combine(bytes: text.rawBytes) }, String(decoding: text.rawBytes, as: UTF8.self))
            }
        case .beginObject:
            try nestedObject().observe(&reader, at: parent / key)
        case .beginArray:
            sawArray()
            let pointer = parent / key
            var index = 0
            while true {
                switch try reader.next() {
                case .endArray, .end:
                    return
                case .beginObject:
                    try elementShape().observe(&reader, at: pointer / index)
                case .beginArray:
                    scalarElements += 1
                    // A nested array: read to its end.
                    let depth = reader.depth
                    while reader.depth >= depth, try reader.next() != .end {}
                default:
                    scalarElements += 1
                }
                index += 1
            }
        case .endObject, .endArray, .key, .end:
            return
        }
    }

    // The counts, one per kind of value; `hash` feeds the uniqueness of tracked keys.

    private func sawNull(_ parent: JSONPointer, _ key: String) {
        present += 1
        nulls += 1
        if firstNull == nil { firstNull = parent / key }
    }

    private func sawInteger(_ hash: (inout Hasher) -> Void) {
        present += 1
        integers += 1
        track(kind: 0, hash)
    }

    private func sawDouble(_ hash: (inout Hasher) -> Void) {
        present += 1
        doubles += 1
        track(kind: 1, hash)
    }

    private func sawBool(_ hash: (inout Hasher) -> Void) {
        present += 1
        bools += 1
        track(kind: 2, hash)
    }

    /// A string, by its UTF-8.
    private func sawString(_ utf8: UnsafeRawBufferPointer) {
        present += 1
        strings += 1
        if ISO8601.seconds(utf8) != nil { dates += 1 }
        track(kind: 3) { $0.combine(bytes: utf8) }
    }

    private func sawArray() {
        present += 1
        arrays += 1
        stopTracking()
    }

    /// The shape of the objects under this key.
    private func nestedObject() -> ObjectShape {
        present += 1
        objects += 1
        stopTracking()
        let shape = object ?? ObjectShape(tracksUniqueness: false, keepsValues: nestedKeepValues)
        object = shape
        return shape
    }

    /// The shape of the objects in arrays under this key.
    private func elementShape() -> ObjectShape {
        let shape = element ?? ObjectShape(tracksUniqueness: false)
        element = shape
        return shape
    }

    /// Adds a scalar's hash (its kind and value) to the distinct ones; a repeat ends the tracking.
    private func track(kind: UInt8, _ hash: (inout Hasher) -> Void) {
        guard hashes != nil, !repeated else { return }
        var hasher = Hasher()
        hasher.combine(kind)
        hash(&hasher)
        if hashes?.insert(hasher.finalize()).inserted == false { stopTracking() }
    }

    /// An object or array, or a repeat: not a key's values.
    private func stopTracking() {
        guard hashes != nil, !repeated else { return }
        repeated = true
        hashes = []
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
        if let theirs = other.values {
            if values == nil { values = [] }
            valuesOverflowed = valuesOverflowed || other.valuesOverflowed
            for value in theirs.sorted() { keep(value) }
        } else if values != nil {
            valuesOverflowed = true   // values of this key seen elsewhere were not kept
        }
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
