import Foundation
import Replica
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// A small JSON Schema (draft 2020-12) validator for the keywords `Schemas/schema.schema.json`
/// uses. Any other keyword is reported as an error, so the schema cannot grow a keyword this
/// validator silently ignores.
struct MiniJSONSchemaValidator {
    let root: JSONValue

    static let annotations: Set<String> = ["$schema", "$id", "title", "description", "default", "$defs"]

    func validate(_ instance: JSONValue) -> [String] {
        validate(instance, against: root, at: .root)
    }

    func resolve(_ ref: String) -> JSONValue? {
        guard ref.hasPrefix("#"), let pointer = JSONPointer(String(ref.dropFirst())) else { return nil }
        return root[pointer: pointer]
    }

    func validate(_ instance: JSONValue, against schema: JSONValue, at pointer: JSONPointer) -> [String] {
        if case .bool(let allowed) = schema { return allowed ? [] : ["\(pointer): not allowed"] }
        guard case .object(let keywords) = schema else { return ["\(pointer): schema is not an object"] }
        var errors: [String] = []
        for (keyword, value) in keywords {
            switch keyword {
            case _ where Self.annotations.contains(keyword):
                continue
            case "$ref":
                guard let ref = value.stringValue, let target = resolve(ref) else {
                    errors.append("unresolvable $ref \(value)")
                    continue
                }
                errors += validate(instance, against: target, at: pointer)
            case "type":
                let names = value.arrayValue?.compactMap(\.stringValue) ?? [value.stringValue ?? ""]
                if !names.contains(where: { matches(instance, type: $0) }) {
                    errors.append("\(pointer): expected \(names.joined(separator: " or ")), found \(instance.typeName)")
                }
            case "enum":
                if !(value.arrayValue ?? []).contains(instance) { errors.append("\(pointer): \(instance) not in enum") }
            case "required":
                if case .object(let object) = instance {
                    for name in value.arrayValue?.compactMap(\.stringValue) ?? [] where object[name] == nil {
                        errors.append("\(pointer): missing \(name)")
                    }
                }
            case "properties":
                if case .object(let object) = instance, case .object(let properties) = value {
                    for (name, sub) in properties {
                        if let member = object[name] { errors += validate(member, against: sub, at: pointer / name) }
                    }
                }
            case "additionalProperties":
                if case .object(let object) = instance {
                    let declared = Set(keywords["properties"]?.objectValue?.keys ?? [])
                    for (name, member) in object where !declared.contains(name) {
                        errors += validate(member, against: value, at: pointer / name)
                    }
                }
            case "propertyNames":
                if case .object(let object) = instance {
                    for name in object.keys { errors += validate(.string(name), against: value, at: pointer / name) }
                }
            case "items":
                if case .array(let array) = instance {
                    for (index, element) in array.enumerated() { errors += validate(element, against: value, at: pointer / index) }
                }
            case "oneOf":
                let passing = (value.arrayValue ?? []).filter { validate(instance, against: $0, at: pointer).isEmpty }.count
                if passing != 1 { errors.append("\(pointer): matches \(passing) of oneOf, not exactly 1") }
            case "minLength":
                if case .string(let s) = instance, s.count < Int(value.int64Value ?? 0) { errors.append("\(pointer): too short") }
            case "minimum":
                if let n = instance.doubleValue, let min = value.doubleValue, n < min { errors.append("\(pointer): below minimum") }
            case "uniqueItems":
                if value.boolValue == true, case .array(let a) = instance, Set(a).count != a.count {
                    errors.append("\(pointer): items are not unique")
                }
            case "minItems":
                if case .array(let a) = instance, a.count < Int(value.int64Value ?? 0) { errors.append("\(pointer): too few items") }
            case "minProperties":
                if case .object(let o) = instance, o.count < Int(value.int64Value ?? 0) { errors.append("\(pointer): too few members") }
            case "pattern":
                if case .string(let s) = instance, let pattern = value.stringValue,
                   s.range(of: pattern, options: .regularExpression) == nil {
                    errors.append("\(pointer): does not match \(pattern)")
                }
            default:
                errors.append("validator does not know keyword '\(keyword)'")
            }
        }
        return errors
    }

    func matches(_ instance: JSONValue, type: String) -> Bool {
        switch (type, instance) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): return true
        case ("number", .int), ("number", .double), ("integer", .int): return true
        case ("integer", .double(let d)): return d.rounded() == d
        default: return false
        }
    }
}
