import Foundation
import OpenAPIKit
import ReplicaCore

/// Why a construct became `json`: where it is in the document and what was done.
struct Unmapped: Hashable {
    let pointer: JSONPointer
    let message: String
}

/// A JSON Schema reduced to what a schema file can say: compositions merged, nullability and
/// formats read, references to component schemas kept by name (whether they are entities is
/// decided later).
indirect enum Shape {
    /// A `$ref` to `#/components/schemas/Name`.
    case component(String)
    /// A column type: `string`, `integer`, `double`, `bool`, `date` or `data`.
    case scalar(String)
    /// An object with properties.
    case object(ObjectShape)
    /// An array of `items`.
    case array(Resolved)
    /// Anything else, kept as JSON; with the reason when it could not be mapped.
    case json(Unmapped?)
}

/// A schema where it is used: its shape, whether it may be null, and the words worth carrying
/// into a description (its description, enum values, read-only).
struct Resolved {
    var shape: Shape
    var nullable: Bool
    var descriptions: [String]
    /// Where the schema is in the document.
    var pointer: JSONPointer
    /// The branches of a `oneOf`/`anyOf` without a discriminator (whose shape is json): what a
    /// response answering one of several objects may still be read as (Stripe's `customer` or
    /// `deleted_customer`).
    var alternatives: [Resolved] = []

    /// The descriptions as one line, `nil` when there are none.
    var description: String? { descriptions.isEmpty ? nil : descriptions.joined(separator: "; ") }

    /// `inner` (the schema a reference names) where `self` (the reference) is used: the
    /// reference's nullability and descriptions are kept beside the target's.
    func replacingShape(with inner: Resolved) -> Resolved {
        var merged = inner
        merged.nullable = nullable || inner.nullable
        merged.descriptions = descriptions + inner.descriptions.filter { !descriptions.contains($0) }
        return merged
    }
}

/// One property of an object.
struct PropertyShape {
    let key: String
    var value: Resolved
    /// Named in the object's `required`.
    var required: Bool
    /// Named in `required` but never defined (its value may be anything).
    var undefined: Bool
}

/// An object's properties in document order.
struct ObjectShape {
    var properties: [PropertyShape]
    /// `additionalProperties` (or `patternProperties`) allow keys beyond the properties.
    var additional: Bool
    /// Set when the object is the union of a discriminated `oneOf`/`anyOf`'s branches.
    var union: Unmapped?

    func property(_ key: String) -> PropertyShape? { properties.first { $0.key == key } }
}

/// Reduces the document's JSON Schemas to shapes, expanding component schemas on demand (once
/// each), refusing recursion through compositions.
final class ShapeResolver {
    /// Component schemas by name, in document order.
    let schemas: [(name: String, schema: JSONSchema)]
    private let byName: [String: JSONSchema]
    /// The document as parsed, for what the typed model folds away.
    let raw: JSONValue
    private var expanded: [String: Resolved] = [:]
    private var expanding: Set<String> = []

    init(schemas: [(name: String, schema: JSONSchema)], raw: JSONValue) {
        self.schemas = schemas
        self.byName = Dictionary(schemas.map { ($0.name, $0.schema) }, uniquingKeysWith: { first, _ in first })
        self.raw = raw
    }

    static func componentPointer(_ name: String) -> JSONPointer { .root / "components" / "schemas" / name }

    /// The shape of the component schema `name`, references it is made of followed.
    func expand(_ name: String) -> Resolved {
        if let cached = expanded[name] { return cached }
        let pointer = Self.componentPointer(name)
        guard let schema = byName[name] else {
            return Resolved(shape: .json(Unmapped(pointer: pointer, message: "no such component schema: json")),
                            nullable: true, descriptions: [], pointer: pointer)
        }
        guard !expanding.contains(name) else {
            return Resolved(shape: .json(Unmapped(pointer: pointer, message: "\(name) is made of itself (recursive allOf, oneOf "
                                                  + "or $ref): json")), nullable: true, descriptions: [], pointer: pointer)
        }
        expanding.insert(name)
        var result = resolve(schema, at: pointer)
        if case .component(let other) = result.shape { result = result.replacingShape(with: expand(other)) }
        expanding.remove(name)
        expanded[name] = result
        return result
    }

    /// `resolved` with a reference to a component followed (once: a component's own shape is
    /// never a bare reference).
    func following(_ resolved: Resolved) -> Resolved {
        guard case .component(let name) = resolved.shape else { return resolved }
        return resolved.replacingShape(with: expand(name))
    }

    /// The column type of a value, references followed; `nil` for objects, arrays and json.
    func scalarType(_ resolved: Resolved) -> String? {
        if case .scalar(let type) = following(resolved).shape { return type }
        return nil
    }

    /// The shape of `schema`, found at `pointer` in the document.
    func resolve(_ schema: JSONSchema, at pointer: JSONPointer) -> Resolved {
        var result = Resolved(shape: .json(nil), nullable: schema.nullable, descriptions: Self.descriptions(of: schema),
                              pointer: pointer)
        if let types = severalTypes(at: pointer) {
            result.shape = .json(Unmapped(pointer: pointer / "type", message: "several types (\(types.joined(separator: ", "))): json"))
            return result
        }
        switch schema.value {
        case .reference(let reference, _):
            result.shape = shape(of: reference, at: pointer)
        case .boolean:
            result.shape = .scalar("bool")
        case .integer:
            result.shape = .scalar("integer")
        case .number:
            result.shape = .scalar("double")
        case .string:
            switch schema.formatString {
            case "date", "date-time": result.shape = .scalar("date")
            case "byte", "binary": result.shape = .scalar("data")
            default: result.shape = .scalar("string")
            }
        case .object(_, let context):
            result.shape = object(context, at: pointer)
        case .array(_, let context):
            if let items = context.items { result.shape = .array(resolve(items, at: pointer / "items")) }
        case .all(of: let parts, _):
            return allOf(parts, at: pointer, base: result)
        case .one(of: let parts, let core):
            return choice(parts, keyword: "oneOf", discriminator: core.discriminator, at: pointer, base: result)
        case .any(of: let parts, let core):
            return choice(parts, keyword: "anyOf", discriminator: core.discriminator, at: pointer, base: result)
        case .not:
            result.shape = .json(Unmapped(pointer: pointer / "not", message: "not: what it excludes is no type: json"))
        case .fragment:
            result.shape = Self.enumShape(schema.allowedValues) ?? .json(nil)
        case .null:
            result.shape = .json(Unmapped(pointer: pointer / "type", message: "type null: always null, json"))
        }
        return result
    }

    /// A `$ref`: a component schema by name, anything else json.
    private func shape(of reference: JSONReference<JSONSchema>, at pointer: JSONPointer) -> Shape {
        switch reference {
        case .internal(.component(let name)):
            guard byName[name] != nil else {
                return .json(Unmapped(pointer: pointer / "$ref", message: "$ref to \(reference.absoluteString), which the document "
                                      + "does not define: json"))
            }
            return .component(name)
        case .internal(.path(let path)):
            let parts = path.components.map(\.stringValue)
            if parts.count == 3, parts[0] == "components", parts[1] == "schemas", byName[parts[2]] != nil {
                return .component(parts[2])
            }
            return .json(Unmapped(pointer: pointer / "$ref", message: "$ref to \(reference.absoluteString), which is no component "
                                  + "schema: json"))
        case .external(let url):
            return .json(Unmapped(pointer: pointer / "$ref", message: "external $ref \(url.absoluteString) is not loaded: json"))
        }
    }

    private func object(_ context: JSONSchema.ObjectContext, at pointer: JSONPointer) -> Shape {
        let additional: Bool
        switch context.additionalProperties {
        case .a(let allowed)?: additional = allowed
        case .b?: additional = true
        case nil: additional = !context.patternProperties.isEmpty
        }
        guard !context.properties.isEmpty else { return .json(nil) }   // free-form, or a map
        let properties = context.properties.map { key, schema in
            PropertyShape(key: key, value: resolve(schema, at: pointer / "properties" / key), required: schema.required,
                          undefined: schema.inferred)
        }
        return .object(ObjectShape(properties: properties, additional: additional, union: nil))
    }

    /// `allOf`: one schema with fragments beside it (a description, `nullable`) is that schema;
    /// several objects are merged (properties and `required` united).
    private func allOf(_ parts: [JSONSchema], at pointer: JSONPointer, base: Resolved) -> Resolved {
        let defined = parts.enumerated().filter { !$0.element.isFragment }
        if defined.count == 1, let only = defined.first {
            return base.replacingShape(with: resolve(only.element, at: pointer / "allOf" / only.offset))
        }
        var result = base
        guard !defined.isEmpty else { return result }
        var merged = ObjectShape(properties: [], additional: false, union: nil)
        for (offset, part) in defined {
            let resolved = following(resolve(part, at: pointer / "allOf" / offset))
            guard case .object(let object) = resolved.shape else {
                if case .json(let unmapped?) = resolved.shape {
                    result.shape = .json(unmapped)   // recursion, or what else made the part json
                } else {
                    result.shape = .json(Unmapped(pointer: pointer / "allOf" / offset, message: "allOf of an object and "
                                                  + "\(Self.kind(resolved.shape)): json"))
                }
                return result
            }
            merged.additional = merged.additional || object.additional
            merged.union = merged.union ?? object.union
            for property in object.properties {
                guard let index = merged.properties.firstIndex(where: { $0.key == property.key }) else {
                    merged.properties.append(property)
                    continue
                }
                let required = merged.properties[index].required || property.required
                if merged.properties[index].undefined && !property.undefined { merged.properties[index] = property }
                merged.properties[index].required = required
            }
        }
        result.shape = .object(merged)
        return result
    }

    /// `oneOf`/`anyOf`: one branch beside `null` is that branch, nullable; with a discriminator,
    /// the union of the branches' properties; else json.
    private func choice(_ parts: [JSONSchema], keyword: String, discriminator: OpenAPI.Discriminator?, at pointer: JSONPointer,
                        base: Resolved) -> Resolved {
        let branches = parts.enumerated().filter { !$0.element.isNull }
        if branches.count == 1, let only = branches.first {
            var result = base.replacingShape(with: resolve(only.element, at: pointer / keyword / only.offset))
            if branches.count < parts.count { result.nullable = true }
            return result
        }
        var result = base
        guard let discriminator else {
            result.shape = .json(Unmapped(pointer: pointer / keyword, message: "\(keyword) without a discriminator: json"))
            result.alternatives = branches.map { resolve($0.element, at: pointer / keyword / $0.offset) }
            return result
        }
        var objects: [ObjectShape] = []
        var names: [String] = []
        for (offset, part) in branches {
            let reference = resolve(part, at: pointer / keyword / offset)
            if case .component(let name) = reference.shape { names.append(name) } else { names.append("#\(offset)") }
            guard case .object(let object) = following(reference).shape else {
                result.shape = .json(Unmapped(pointer: pointer / keyword / offset, message: "\(keyword) with a discriminator and "
                                              + "a branch that is no object: json"))
                return result
            }
            objects.append(object)
        }
        var union = ObjectShape(properties: [], additional: objects.contains { $0.additional }, union: nil)
        for object in objects {
            for property in object.properties where union.property(property.key) == nil {
                var added = property
                // Required only when every branch requires it.
                added.required = objects.allSatisfy { $0.property(property.key)?.required == true }
                union.properties.append(added)
            }
        }
        union.union = Unmapped(pointer: pointer / keyword, message: "\(keyword) with discriminator '\(discriminator.propertyName)': "
                               + "the union of the properties of \(names.joined(separator: ", "))")
        result.shape = .object(union)
        return result
    }

    /// An enum without a type: strings or integers when all its values are.
    private static func enumShape(_ values: [AnyCodable]?) -> Shape? {
        guard let values, !values.isEmpty else { return nil }
        if values.allSatisfy({ $0.value is String }) { return .scalar("string") }
        if values.allSatisfy({ $0.value is Int }) { return .scalar("integer") }
        return nil
    }

    /// What a property's description says: its description, enum values, read-only or write-only.
    static func descriptions(of schema: JSONSchema) -> [String] {
        var parts: [String] = []
        if let text = schema.description?.split(whereSeparator: \.isNewline).joined(separator: " ")
            .trimmingCharacters(in: .whitespaces), !text.isEmpty {
            parts.append(text)
        }
        if let values = schema.allowedValues, !values.isEmpty {
            parts.append("one of: " + values.map { String(describing: $0.value) }.joined(separator: ", "))
        }
        if schema.readOnly { parts.append("read-only") }
        if schema.writeOnly { parts.append("write-only") }
        if schema.deprecated { parts.append("deprecated") }
        return parts
    }

    static func kind(_ shape: Shape) -> String {
        switch shape {
        case .component(let name): return name
        case .scalar(let type): return "a \(type)"
        case .object: return "an object"
        case .array: return "an array"
        case .json: return "json"
        }
    }

    /// The types of a 3.1 `type` array naming more than one type besides null (which the typed
    /// model reads as its first type only).
    private func severalTypes(at pointer: JSONPointer) -> [String]? {
        guard let types = raw[pointer: pointer]?["type"]?.arrayValue else { return nil }
        let named = types.compactMap(\.stringValue).filter { $0 != "null" }
        return named.count > 1 ? named : nil
    }
}
