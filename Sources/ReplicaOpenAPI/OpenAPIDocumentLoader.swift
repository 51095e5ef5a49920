import Foundation
import OpenAPIKit
import OpenAPIKit30
import OpenAPIKitCompat
import ReplicaCore
import Yams

/// Reads an OpenAPI document's bytes: JSON or YAML (told by the content), its version checked
/// first (3.0.x is decoded with OpenAPIKit30 and converted to 3.1; 3.1.x, and 3.2.x which
/// OpenAPIKit reads too, are decoded as they are), every failure a ``SchemaError`` `.invalidOpenAPI` naming the file and where.
struct OpenAPIDocumentLoader {
    /// The document and its raw tree (members in document order), which keeps what the typed
    /// model folds away (a `type` array's second type).
    struct Loaded {
        let document: OpenAPIKit.OpenAPI.Document
        let raw: JSONValue
    }

    /// The file, for errors.
    let file: String

    func fail(_ message: String, pointer: JSONPointer? = nil) -> SchemaError {
        SchemaError(.invalidOpenAPI, message, file: file, pointer: pointer)
    }

    func load(_ data: Data) throws -> Loaded {
        guard var text = String(data: data, encoding: .utf8) else {
            throw fail("not UTF-8 text: an OpenAPI document is JSON or YAML")
        }
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        let first = text.first { !$0.isWhitespace }
        let isJSON = first == "{" || first == "["
        let raw = isJSON ? try parseJSON(text) : try parseYAML(text)
        guard case .object(let root) = raw else {
            throw fail("not an OpenAPI document: expected an object with an 'openapi' version, found \(raw.typeName)",
                       pointer: .root)
        }
        if let swagger = root["swagger"] {
            throw fail("a Swagger \(swagger.stringValue ?? swagger.serialized()) document: only OpenAPI 3 documents (3.0, 3.1, "
                       + "3.2) are imported (convert it to OpenAPI 3 first)", pointer: .root / "swagger")
        }
        guard let versionValue = root["openapi"] else {
            throw fail("not an OpenAPI document: no 'openapi' version (OpenAPI 3.0, 3.1 and 3.2 are imported)", pointer: .root)
        }
        guard let version = versionValue.stringValue else {
            throw fail("the 'openapi' version must be a string such as \"3.1.0\", found \(versionValue.serialized())",
                       pointer: .root / "openapi")
        }
        let document: OpenAPIKit.OpenAPI.Document
        if version.hasPrefix("3.0.") {
            let old = try decode(OpenAPIKit30.OpenAPI.Document.self, text: text, isJSON: isJSON)
            document = old.convert(to: .v3_1_1)
        } else if version.hasPrefix("3.1.") || version.hasPrefix("3.2.") {
            document = try decode(OpenAPIKit.OpenAPI.Document.self, text: text, isJSON: isJSON)
        } else {
            throw fail("OpenAPI \(version) is not imported: only OpenAPI 3.0.x, 3.1.x and 3.2.x documents are", pointer: .root / "openapi")
        }
        return Loaded(document: document, raw: raw)
    }

    /// Decodes the typed document. YAML's decoder keeps the order of members (Foundation's JSON
    /// decoder does not), so it reads JSON too; JSON that YAML cannot read (tabs before keys)
    /// falls back to Foundation's decoder.
    private func decode<Document: Decodable>(_ type: Document.Type, text: String, isJSON: Bool) throws -> Document {
        do {
            return try YAMLDecoder().decode(type, from: text)
        } catch {
            guard let syntax = Self.yamlSyntaxError(error) else { throw invalidDocument(error) }
            guard isJSON else { throw yamlError(syntax) }
            do {
                return try JSONDecoder().decode(type, from: Data(text.utf8))
            } catch {
                throw invalidDocument(error)
            }
        }
    }

    /// The YAML syntax error behind a decoding error (the decoder wraps it), if that is what it is.
    private static func yamlSyntaxError(_ error: any Error) -> YamlError? {
        if let syntax = error as? YamlError { return syntax }
        if case DecodingError.dataCorrupted(let context) = error { return context.underlyingError as? YamlError }
        return nil
    }

    /// A decoding error, described as OpenAPIKit describes it, at its coding path.
    private func invalidDocument(_ error: any Error) -> SchemaError {
        let described = OpenAPIKit.OpenAPI.Error(from: error)
        return fail("not a valid OpenAPI document: \(described.localizedDescription)", pointer: Self.pointer(described.codingPath))
    }

    /// A decoder's coding path as a JSON pointer.
    static func pointer(_ path: [any CodingKey]) -> JSONPointer {
        JSONPointer(components: path.map { key in key.intValue.map(JSONPointer.Component.index) ?? .key(key.stringValue) })
    }

    private func parseJSON(_ text: String) throws -> JSONValue {
        do {
            return try JSONValue(parsing: text)
        } catch {
            throw fail("not valid JSON: \(error)")
        }
    }

    private func parseYAML(_ text: String) throws -> JSONValue {
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw yamlError(error)
        }
        guard let node else { throw fail("the document is empty") }
        return Self.json(node)
    }

    /// A YAML syntax error with its line and column.
    private func yamlError(_ error: YamlError) -> SchemaError {
        func at(_ mark: Mark, _ context: YamlError.Context?, _ problem: String) -> SchemaError {
            let context = context.map { "\($0.text) (line \($0.mark.line)), " } ?? ""
            return fail("invalid YAML at line \(mark.line), column \(mark.column): \(context)\(problem)")
        }
        switch error {
        case .scanner(let context, let problem, let mark, _),
             .parser(let context, let problem, let mark, _),
             .composer(let context, let problem, let mark, _):
            return at(mark, context, problem)
        case .reader(let problem, let offset, _, _):
            return fail("invalid YAML\(offset.map { " at byte \($0)" } ?? ""): \(problem)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return fail("invalid YAML at line \(context.mark.line), column \(context.mark.column): "
                        + "keys given twice in one mapping: \(duplicates.joined(separator: ", "))")
        default:
            return fail("invalid YAML: \(error)")
        }
    }

    /// A YAML node as JSON: mappings in document order, scalars by their resolved tag.
    static func json(_ node: Node) -> JSONValue {
        switch node {
        case .mapping(let mapping):
            var object = JSONObject()
            for (key, value) in mapping { object[key.string ?? ""] = json(value) }
            return .object(object)
        case .sequence(let sequence):
            return .array(sequence.map(json))
        case .scalar(let scalar):
            // Quoted scalars are strings; plain ones are read as YAML's decoder reads them.
            if scalar.style == .singleQuoted || scalar.style == .doubleQuoted { return .string(scalar.string) }
            if node.null != nil { return .null }
            if let bool = node.bool { return .bool(bool) }
            if let int = node.int { return .int(Int64(int)) }
            if let double = node.float { return .double(double) }
            return .string(scalar.string)
        case .alias:
            return .null
        }
    }
}
