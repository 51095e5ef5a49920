/// One level of a property map's key lookup: JSON key → what it holds.
///
/// Key paths (`address.geo.lat`) make nested nodes, so mapping an object costs
/// one dictionary lookup per JSON member and allocates no key strings.
struct KeyNode: Sendable {
    /// What a JSON key holds.
    enum Slot: Sendable {
        /// The attribute at this index.
        case attribute(Int)
        /// The relationship at this index.
        case relationship(Int)
        /// An object whose members are keyed by the nested node.
        case object(KeyNode)
    }

    var slots: [String: Slot] = [:]

    /// The slot at the end of `path`, or `nil`.
    func slot(at path: [String]) -> Slot? {
        var node = self
        for (position, key) in path.enumerated() {
            guard let slot = node.slots[key] else { return nil }
            if position == path.count - 1 { return slot }
            guard case .object(let child) = slot else { return nil }
            node = child
        }
        return nil
    }

    /// The first attribute or relationship under this node, depth first, as `(slot, path)`; for error messages.
    func firstLeaf(prefix: [String]) -> (Slot, [String])? {
        for key in slots.keys.sorted() {
            guard let slot = slots[key] else { continue }
            if case .object(let child) = slot {
                if let leaf = child.firstLeaf(prefix: prefix + [key]) { return leaf }
            } else {
                return (slot, prefix + [key])
            }
        }
        return nil
    }

    /// Builds the lookup tree of an entity's keys.
    ///
    /// - Throws: ``MappingError/Code/collidingKeys`` when two members have the same key,
    ///   or when one member's key is a prefix of another's key path (`address` and `address.city`).
    static func build(entity: String, attributes: [AttributeMapping],
                      relationships: [RelationshipMapping]) throws(MappingError) -> KeyNode {
        func describe(_ slot: Slot) -> String {
            switch slot {
            case .attribute(let i): return "attribute '\(attributes[i].name)'"
            case .relationship(let i): return "relationship '\(relationships[i].name)'"
            case .object: return "a nested object"
            }
        }
        func insert(_ leaf: Slot, path: ArraySlice<String>, fullPath: [String], into node: inout KeyNode) throws(MappingError) {
            guard let key = path.first else { return }
            let rest = path.dropFirst()
            let existing = node.slots[key]
            if rest.isEmpty {
                guard let existing else { node.slots[key] = leaf; return }
                let (other, otherPath): (Slot, [String])
                if case .object(let child) = existing, let found = child.firstLeaf(prefix: Array(fullPath)) {
                    (other, otherPath) = found
                } else {
                    (other, otherPath) = (existing, fullPath)
                }
                throw collision(describe(other), otherPath, describe(leaf), fullPath)
            }
            var child: KeyNode
            switch existing {
            case .none: child = KeyNode()
            case .object(let node)?: child = node
            case let other?:
                let prefix = Array(fullPath[..<(fullPath.count - rest.count)])
                throw collision(describe(other), prefix, describe(leaf), fullPath)
            }
            try insert(leaf, path: rest, fullPath: fullPath, into: &child)
            node.slots[key] = .object(child)
        }
        func collision(_ first: String, _ firstPath: [String], _ second: String, _ secondPath: [String]) -> MappingError {
            let firstKey = firstPath.joined(separator: "."), secondKey = secondPath.joined(separator: ".")
            let message = firstKey == secondKey
                ? "\(first) and \(second) both map to JSON key '\(firstKey)'"
                : "\(first) (JSON key '\(firstKey)') and \(second) (JSON key '\(secondKey)') collide: "
                    + "'\(firstPath.count < secondPath.count ? firstKey : secondKey)' cannot hold both a value and nested keys"
            return MappingError(.collidingKeys, message, entity: entity)
        }
        var root = KeyNode()
        for (index, attribute) in attributes.enumerated() {
            try insert(.attribute(index), path: attribute.jsonPath[...], fullPath: attribute.jsonPath, into: &root)
        }
        for (index, relationship) in relationships.enumerated() {
            try insert(.relationship(index), path: relationship.jsonPath[...], fullPath: relationship.jsonPath, into: &root)
        }
        return root
    }
}
