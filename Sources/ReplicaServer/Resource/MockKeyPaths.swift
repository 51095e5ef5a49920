/// Where each property of a resource sits in its JSON objects: a dotted name (`address.city`, a schema
/// attribute's dotted `jsonKey`) is a key path into nested objects (`{"address": {"city": …}}`), as
/// Replica's property maps read it; a name without dots is a top-level key.
///
/// Stores keep properties flat, under their names; ``MockResource/harvest(_:keepingKey:)`` reads bodies
/// through these paths and ``MockResource/nested(_:)`` writes responses through them.
struct MockKeyPaths: Sendable, Hashable {
    /// What one key of one JSON object level holds.
    enum Slot: Sendable, Hashable {
        /// The property at this index of the resource's properties.
        case property(Int)
        /// A nested object whose keys are those of the node.
        case object(Node)
    }

    /// One level of keys, in the order of their first property.
    struct Node: Sendable, Hashable {
        var keys: [String] = []
        var slots: [String: Slot] = [:]

        mutating func set(_ key: String, _ slot: Slot) {
            if slots.updateValue(slot, forKey: key) == nil { keys.append(key) }
        }

        /// The property indexes under this node, depth first in key order.
        func properties() -> [Int] {
            keys.flatMap { key -> [Int] in
                switch slots[key] {
                case .property(let index)?: return [index]
                case .object(let child)?: return child.properties()
                case nil: return []
                }
            }
        }
    }

    /// The top level.
    let root: Node
    /// The key path of each property, by index; a property whose path collides is kept under its whole name.
    let paths: [[String]]
    /// Whether any property is nested (when none is, objects go out as stored).
    let nests: Bool
    /// Why two properties cannot both have their paths (`address` and `address.city`); nil when none collide.
    let collision: String?

    /// The paths of `properties`: top-level names first, then dotted ones in order; a dotted name that runs
    /// into another property (`address.city` beside `address`, or `a.b.c` beside `a.b`) stays a top-level key
    /// under its whole name, and ``collision`` says so (the server refuses such a resource).
    init(_ properties: [MockProperty]) {
        var placed = Node()
        var paths = properties.map { [$0.name] }
        var collision: String?
        var nests = false
        for (index, property) in properties.enumerated() where !property.name.contains(".") {
            placed.set(property.name, .property(index))
        }
        for (index, property) in properties.enumerated() where property.name.contains(".") {
            let path = property.name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            if let other = Self.insert(index, path: path[...], into: &placed) {
                placed.set(property.name, .property(index))
                if collision == nil {
                    collision = "property '\(property.name)' and property '\(properties[other].name)' collide: "
                        + "a JSON key cannot hold both a value and nested keys"
                }
            } else {
                paths[index] = path
                nests = true
            }
        }
        // The paths no longer collide; placed again in property order, so that objects go out in that order.
        var root = Node()
        for (index, path) in paths.enumerated() { _ = Self.insert(index, path: path[...], into: &root) }
        self.root = root
        self.paths = paths
        self.nests = nests
        self.collision = collision
    }

    /// Inserts a property at `path`; on a collision leaves `node` as it was and returns the index of a
    /// property in the way.
    private static func insert(_ index: Int, path: ArraySlice<String>, into node: inout Node) -> Int? {
        guard let key = path.first else { return nil }
        let rest = path.dropFirst()
        switch node.slots[key] {
        case nil:
            if rest.isEmpty {
                node.set(key, .property(index))
                return nil
            }
            var child = Node()
            _ = insert(index, path: rest, into: &child)
            node.set(key, .object(child))
            return nil
        case .property(let other)?:
            return other
        case .object(var child)?:
            if rest.isEmpty { return child.properties().first }
            if let other = insert(index, path: rest, into: &child) { return other }
            node.set(key, .object(child))
            return nil
        }
    }

    /// `values` (keyed by property name) as a JSON object with every property of `node` at its path, a
    /// missing value as null: nested objects are always there, their members null when nothing is stored.
    static func build(_ node: Node, from values: JSONObject, properties: [MockProperty]) -> JSONObject {
        var object = JSONObject()
        for key in node.keys {
            switch node.slots[key] {
            case .property(let index)?: object[key] = values[properties[index].name] ?? .null
            case .object(let child)?: object[key] = .object(build(child, from: values, properties: properties))
            case nil: continue
            }
        }
        return object
    }
}
