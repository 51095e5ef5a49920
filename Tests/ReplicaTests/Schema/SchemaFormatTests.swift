import Foundation
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("schema.schema.json")
struct SchemaFormatTests {
    static let exampleFiles = ["blog.json", "git-refs.json", "issues.json", "jsonapi.json", "people-live.json", "people.json"]

    func formatValidator() throws -> MiniJSONSchemaValidator {
        let data = try Data(contentsOf: TestSupport.schemaFile("schema.schema.json"))
        return MiniJSONSchemaValidator(root: try JSONValue(parsing: data))
    }

    @Test("every example under Schemas/ validates against the format's JSON Schema")
    func examplesValidate() throws {
        let validator = try formatValidator()
        let files = try FileManager.default.contentsOfDirectory(atPath: packageRoot.appendingPathComponent("Schemas").path)
            .filter { $0.hasSuffix(".json") && $0 != "schema.schema.json" }
            .sorted()
        #expect(files == Self.exampleFiles)
        for file in files {
            let instance = try JSONValue(parsing: try Data(contentsOf: TestSupport.schemaFile(file)))
            #expect(validator.validate(instance) == [], "\(file)")
        }
    }

    @Test("the format's JSON Schema rejects what the loader rejects")
    func formatRejects() throws {
        let validator = try formatValidator()
        let bad: [String] = [
            #"{"name": "t", "entities": {"User": {"attributes": {"id": {"type": "strng"}}}}}"#,
            #"{"name": "t", "entities": {"User": {"attributes": {"id": {"type": "integer", "nulable": false}}}}}"#,
            #"{"entities": {}}"#,
            #"{"name": "t", "entities": {}, "routes": [{"path": "users", "target": "User"}]}"#,
            #"{"name": "t", "entities": {"P": {"attributes": {"id": "integer"}, "relationships": {"a": {"toOne": "U"}}}}}"#,
            #"{"name": "t", "keyConvention": "kebab", "entities": {}}"#,
            #"{"name": "t", "entities": {"I": {"attributes": {"id": "integer"}, "relationships": {"l": {"toMany": "I", "inverse": "x", "through": "j"}}}}}"#,
            #"{"name": "t", "entities": {"I": {"attributes": {"id": "integer"}, "relationships": {"l": {"toMany": "I", "through": "j", "throughKeys": ["a"]}}}}}"#,
            #"{"name": "t", "entities": {"A": {"attributes": {"id": "string"}}}, "routes": [{"path": "/a", "target": "A", "discriminator": {"format": "xml", "entities": {"a": "A"}}}]}"#,
            #"{"name": "t", "entities": {"A": {"attributes": {"id": "string"}}}, "routes": [{"path": "/a", "target": "A", "discriminator": {"entities": {}}}]}"#,
            #"{"name": "t", "entities": {"A": {"attributes": {"id": "string"}}}, "routes": [{"path": "/a", "target": "A", "discriminator": {"entities": {"a": "A"}, "included": "x"}}]}"#,
        ]
        for text in bad {
            #expect(!validator.validate(try JSONValue(parsing: text)).isEmpty, "\(text)")
            // The loader rejects the same file, with a schema error naming it.
            let error = #expect(throws: SchemaError.self, "\(text)") { try Schema(json: Data(text.utf8), file: "bad.json") }
            #expect(error?.file == "bad.json", "\(text)")
        }
    }

    @Test("the same files validate with Python's jsonschema",
          .enabled(if: SchemaFormatTests.pythonJSONSchemaAvailable, "python3 with jsonschema is not installed"))
    func pythonCrossCheck() throws {
        let script = """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.Draft202012Validator.check_schema(schema)
            for path in sys.argv[2:]:
                jsonschema.Draft202012Validator(schema).validate(json.load(open(path)))
            print("valid", len(sys.argv) - 2)
            """
        let output = try Self.python(["-c", script, TestSupport.schemaFile("schema.schema.json").path]
            + Self.exampleFiles.map { TestSupport.schemaFile($0).path })
        #expect(output.status == 0)
        #expect(output.text == "valid \(Self.exampleFiles.count)\n")
    }

    static let pythonJSONSchemaAvailable: Bool = {
        (try? python(["-c", "import jsonschema"]).status) == 0
    }()

    static func python(_ arguments: [String]) throws -> (status: Int32, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
