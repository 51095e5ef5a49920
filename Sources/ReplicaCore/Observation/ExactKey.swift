/// Byte-exact identity of stored values.
///
/// Swift compares strings by Unicode canonical equivalence (`"é" == "e\u{301}"`); SQLite compares
/// bytes. Live results identify rows, sections and updates as SQLite does, so that a row whose
/// text changed to a canonically equivalent spelling is still reported as updated and two keys
/// SQLite keeps apart are never merged.
extension AttributeValue {
    /// `true` when both values are stored identically: same case, strings and JSON by UTF-8 bytes.
    func isIdentical(to other: AttributeValue) -> Bool {
        switch (self, other) {
        case (.string(let a), .string(let b)): return a.utf8.elementsEqual(b.utf8)
        case (.json(let a), .json(let b)): return a.serialized().utf8.elementsEqual(b.serialized().utf8)
        default: return self == other
        }
    }
}

extension EntityRow {
    /// `true` when both rows have the same entity, attributes and byte-identical values.
    func isIdentical(to other: EntityRow) -> Bool {
        guard entity == other.entity, names == other.names, values.count == other.values.count else { return false }
        for index in values.indices where !values[index].isIdentical(to: other.values[index]) { return false }
        return true
    }
}

/// A dictionary key with byte-exact equality (see ``AttributeValue/isIdentical(to:)``).
package struct ExactKey: Hashable, Sendable {
    let value: AttributeValue

    package init(_ value: AttributeValue) { self.value = value }

    package static func == (lhs: ExactKey, rhs: ExactKey) -> Bool { lhs.value.isIdentical(to: rhs.value) }

    package func hash(into hasher: inout Hasher) {
        switch value {
        case .string(let text):
            hasher.combine(1 as UInt8)
            var copy = text
            copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        case .json(let json):
            hasher.combine(2 as UInt8)
            var text = json.serialized()
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        default:
            hasher.combine(value)
        }
    }
}
