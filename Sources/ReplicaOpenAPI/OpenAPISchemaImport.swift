import Foundation
import ReplicaCore

/// Imports a schema from an OpenAPI 3.0 or 3.1 document (JSON or YAML; 3.2, which OpenAPIKit
/// reads too, is accepted): what most public APIs already publish, instead of every entity and
/// attribute written by hand.
///
/// Component schemas with an identity (`id`, else a key-like property such as `username` or
/// `petId` in `Pet`, else the property a `GET /pets/{param}` path names) become entities; `$ref`s
/// to them become `toOne` relationships with a foreign key, arrays of them `through` links;
/// `allOf` is merged, `nullable` and `type: [T, "null"]` read, formats typed (int32/int64 →
/// integer, float/double → double, date/date-time → date, byte/binary → data), enums kept as
/// their type with the values in the description. Inline objects without an identity become
/// dotted attributes (`category.name`), arrays of scalars and maps `json`. Operations become
/// routes (`{petId}` → `:petId`): GET, and POST/PUT/PATCH/DELETE with their `method`, each
/// targeting the entity its 2xx JSON response (or request body) holds, a wrapper's array
/// (`{items: [Pet], total: 3}`) read through `envelope`; other JSON responses are DATA routes.
///
/// Nothing is dropped: every property of every entity is a column, a relationship or `json`.
/// What cannot be mapped (`oneOf` without a discriminator, `not`, external `$ref`s, recursion)
/// is kept as `json` and reported in ``InferredSchema/notes`` with its JSON pointer.
///
/// ```swift
/// let imported = try OpenAPISchemaImport.schema(contentsOf: URL(fileURLWithPath: "Schemas/openapi/petstore.yaml"))
/// try imported.text.write(toFile: "petstore.json", atomically: true, encoding: .utf8)
/// for note in imported.notes { print(note) }
/// // Address at petstore.yaml #/components/schemas/Address: an object without an id or identity-like property: not an entity
/// ```
public enum OpenAPISchemaImport {
    /// Imports the OpenAPI document in a file. The format (JSON or YAML) is read from the
    /// content, not the file's extension.
    ///
    /// ```swift
    /// let imported = try OpenAPISchemaImport.schema(contentsOf: URL(fileURLWithPath: "petstore.yaml"))
    /// imported.schema.entities.map(\.name)   // ["Order", "Customer", "Category", "User", "Tag", "Pet"]
    /// ```
    /// - Parameters:
    ///   - url: the document.
    ///   - name: the schema's name; by default the file's name without its extension.
    /// - Returns: the schema, its file JSON (as `replica schema infer` writes it) and the notes.
    /// - Throws: ``SchemaError`` `.unreadableFile` naming the file; `.invalidOpenAPI` naming the
    ///   file and where (line and column, or JSON pointer) when the document does not parse or is
    ///   no OpenAPI 3 document (Swagger 2.0, say).
    public static func schema(contentsOf url: URL, name: String? = nil) throws -> InferredSchema {
        let (data, file) = try SchemaError.contents(of: url, what: "OpenAPI document")
        return try schema(from: data, source: url.lastPathComponent, file: file, name: name)
    }

    /// Imports an OpenAPI document from its bytes (JSON or YAML, read from the content).
    ///
    /// ```swift
    /// let imported = try OpenAPISchemaImport.schema(from: Data(yaml.utf8), source: "api.yaml")
    /// print(imported.text)
    /// ```
    /// - Parameters:
    ///   - data: the document's UTF-8 text.
    ///   - source: the document's name, in errors and notes (`petstore.yaml`).
    ///   - name: the schema's name; by default `source` without its extension.
    /// - Returns: the schema, its file JSON and the notes.
    /// - Throws: ``SchemaError`` `.invalidOpenAPI` naming `source` and where.
    public static func schema(from data: Data, source: String, name: String? = nil) throws -> InferredSchema {
        try schema(from: data, source: source, file: source, name: name)
    }

    private static func schema(from data: Data, source: String, file: String, name: String?) throws -> InferredSchema {
        let loaded = try OpenAPIDocumentLoader(file: file).load(data)
        let schemaName = name ?? Self.defaultName(source)
        let importer = OpenAPIImporter(document: loaded.document, raw: loaded.raw, source: source)
        return try importer.inferredSchema(name: schemaName)
    }

    /// `petstore.yaml` → `petstore`.
    static func defaultName(_ source: String) -> String {
        let base = URL(fileURLWithPath: source).deletingPathExtension().lastPathComponent
        return base.isEmpty ? "openapi" : base
    }
}
