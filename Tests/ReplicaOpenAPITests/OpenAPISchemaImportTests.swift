import Foundation
import Replica
import ReplicaOpenAPI
import ReplicaTestSupport
import Testing

/// Small documents written for one mapping each: the schema file text they import exactly, the
/// notes with their pointers, and the errors a document that is no OpenAPI 3 document gives.
@Suite("OpenAPI import: mapping and errors")
struct OpenAPISchemaImportTests {
    /// A 3.1 document: allOf of a base and an extension, type arrays with null, formats, an enum,
    /// a nullable reference (anyOf with null), a self link, an inline object, a map, oneOf
    /// without a discriminator, not, a wrapper response, a keeper keyed by its path's parameter.
    static let shelter = """
        openapi: 3.1.0
        info: {title: Shelter, version: "1.0"}
        paths:
          /animals:
            get:
              responses:
                '200':
                  description: a page of animals
                  content:
                    application/json:
                      schema:
                        type: object
                        properties:
                          data: {type: array, items: {$ref: '#/components/schemas/Animal'}}
                          total: {type: integer}
            post:
              requestBody:
                content:
                  application/json:
                    schema: {$ref: '#/components/schemas/Animal'}
              responses:
                '201': {description: created}
          /animals/{id}:
            get:
              responses:
                '200':
                  description: one animal
                  content:
                    application/json:
                      schema: {$ref: '#/components/schemas/Animal'}
            patch:
              responses:
                '200':
                  description: the animal changed
                  content:
                    application/json:
                      schema: {$ref: '#/components/schemas/Animal'}
            delete:
              responses:
                '204': {description: gone}
          /keepers/{handle}:
            get:
              responses:
                '200':
                  description: one keeper
                  content:
                    application/json:
                      schema: {$ref: '#/components/schemas/Keeper'}
        components:
          schemas:
            Named:
              type: object
              required: [name]
              properties:
                name: {type: string}
            Animal:
              description: An animal of the shelter.
              allOf:
                - $ref: '#/components/schemas/Named'
                - type: object
                  required: [id, born]
                  properties:
                    id: {type: integer, format: int64, readOnly: true}
                    born: {type: string, format: date}
                    weight: {type: [number, "null"], format: double}
                    photo: {type: string, format: byte}
                    sex: {type: string, enum: [female, male]}
                    keeper:
                      anyOf: [{$ref: '#/components/schemas/Keeper'}, {type: "null"}]
                    friends: {type: array, items: {$ref: '#/components/schemas/Animal'}}
                    pen:
                      type: object
                      required: [number]
                      properties:
                        number: {type: integer, format: int32}
                        building: {type: [string, "null"]}
                    labels: {type: object, additionalProperties: {type: string}}
                    diet:
                      oneOf: [{type: string}, {type: array, items: {type: string}}]
                    notVegan: {not: {type: string}}
            Keeper:
              type: object
              properties:
                handle: {type: string}
                since: {type: string, format: date-time}
        """

    static func imported(_ text: String, source: String) throws -> InferredSchema {
        try OpenAPISchemaImport.schema(from: Data(text.utf8), source: source)
    }

    @Test("a 3.1 document: the exact schema file, and notes pointing at what became json")
    func shelterFile() throws {
        let imported = try Self.imported(Self.shelter, source: "shelter.yaml")
        #expect(imported.text == """
            {
              "name": "shelter",
              "version": 1,
              "description": "Shelter 1.0 (imported from shelter.yaml)",
              "keyConvention": "camelCase",
              "entities": {
                "Animal": {
                  "description": "An animal of the shelter.",
                  "attributes": {
                    "name": {
                      "type": "string",
                      "nullable": false
                    },
                    "id": {
                      "type": "integer",
                      "description": "read-only"
                    },
                    "born": {
                      "type": "date",
                      "nullable": false
                    },
                    "weight": "double",
                    "photo": "data",
                    "sex": {
                      "type": "string",
                      "description": "one of: female, male"
                    },
                    "keeperID": "string",
                    "penNumber": {
                      "type": "integer",
                      "jsonKey": "pen.number"
                    },
                    "penBuilding": {
                      "type": "string",
                      "jsonKey": "pen.building"
                    },
                    "labels": "json",
                    "diet": "json",
                    "notVegan": "json"
                  },
                  "relationships": {
                    "keeper": {
                      "toOne": "Keeper",
                      "foreignKey": "keeperID"
                    },
                    "friends": {
                      "toMany": "Animal",
                      "through": "animal_friends",
                      "throughKeys": [
                        "animalID",
                        "friendID"
                      ]
                    }
                  }
                },
                "Keeper": {
                  "primaryKey": "handle",
                  "jsonIdKey": "handle",
                  "attributes": {
                    "handle": "string",
                    "since": "date"
                  }
                }
              },
              "routes": [
                {
                  "path": "/animals",
                  "target": "Animal",
                  "envelope": "data"
                },
                {
                  "method": "POST",
                  "path": "/animals",
                  "target": "Animal"
                },
                {
                  "path": "/animals/:id",
                  "target": "Animal"
                },
                {
                  "method": "PATCH",
                  "path": "/animals/:id",
                  "target": "Animal"
                },
                {
                  "method": "DELETE",
                  "path": "/animals/:id",
                  "target": "Animal"
                },
                {
                  "path": "/keepers/:handle",
                  "target": "Keeper"
                }
              ]
            }

            """)
        #expect(imported.notes.map(\.description) == [
            "Named at shelter.yaml #/components/schemas/Named: an object without an id or identity-like property: not an entity",
            "Animal.diet at shelter.yaml #/components/schemas/Animal/allOf/1/properties/diet/oneOf: oneOf without a discriminator: json",
            "Animal.notVegan at shelter.yaml #/components/schemas/Animal/allOf/1/properties/notVegan/not: not: what it excludes is no type: json",
        ])
        #expect(imported.notes.first?.subject == "Named")
        #expect(imported.notes.first?.place == "shelter.yaml #/components/schemas/Named")
    }

    @Test("the shelter's schema syncs a page of animals with keepers, friends, a pen and a map: nothing unplaced, nothing changed twice")
    func shelterRoundTrip() async throws {
        let imported = try Self.imported(Self.shelter, source: "shelter.yaml")
        let page = """
            {"data": [{"id": 1, "name": "Rex", "born": "2020-05-01", "weight": 30.5, "photo": "aGVsbG8=", "sex": "male",
                       "keeper": {"handle": "ann", "since": "2021-01-02T03:04:05Z"},
                       "friends": [{"id": 2, "name": "Tom", "born": "2019-02-03", "weight": null}],
                       "pen": {"number": 4, "building": null}, "labels": {"temper": "calm"}, "diet": ["meat", "rice"],
                       "notVegan": 1},
                      {"id": 2, "name": "Tom", "born": "2019-02-03", "weight": null, "keeper": null, "friends": [],
                       "pen": {"number": 5, "building": "B"}, "diet": "fish"}],
             "total": 2}
            """
        let store = try SQLiteReplica(store: Store.inMemory(schema: imported.schema))
        let result = try await OpenAPIPetStoreTests.importsCleanly(store, "/animals", page)
        #expect(result.changes["Animal"]?.inserted.integers == [1, 2])
        #expect(result.changes["Keeper"]?.inserted.strings == ["ann"])
        let rex = try #require(try await store.rows(RowQuery("Animal", where: "id = ?", arguments: [.integer(1)])).first)
        #expect(rex["keeperID"] == .string("ann"))
        #expect(rex["penNumber"] == .integer(4))
        #expect(rex["photo"] == .data(Array("hello".utf8)))
        #expect(rex["labels"] == .json(.parse(#"{"temper": "calm"}"#)))
        _ = try await OpenAPIPetStoreTests.importsCleanly(store, "/keepers/ann", #"{"handle": "ann", "since": "2021-01-02T03:04:05Z"}"#)
    }

    @Test("a 3.0 document: nullable, a discriminated oneOf becomes the union of its branches, noted")
    func discriminatedUnion() throws {
        let zoo = """
            openapi: 3.0.3
            info: {title: Zoo, version: "1"}
            paths:
              /pets:
                get:
                  responses:
                    '200':
                      description: the pets
                      content:
                        application/json:
                          schema: {type: array, items: {$ref: '#/components/schemas/Pet'}}
            components:
              schemas:
                Pet:
                  oneOf: [{$ref: '#/components/schemas/Cat'}, {$ref: '#/components/schemas/Dog'}]
                  discriminator: {propertyName: kind}
                Cat:
                  type: object
                  required: [id, kind, owner_name]
                  properties:
                    id: {type: string, format: uuid}
                    kind: {type: string}
                    owner_name: {type: string, nullable: true}
                    indoor: {type: boolean}
                Dog:
                  type: object
                  required: [id, kind, breed]
                  properties:
                    id: {type: string, format: uuid}
                    kind: {type: string}
                    breed: {type: string}
            """
        let imported = try Self.imported(zoo, source: "zoo.yaml")
        #expect(imported.fileJSON["keyConvention"] == "snake_case")
        #expect(imported.schema.entities.map(\.name) == ["Pet", "Cat", "Dog"])
        #expect(imported.fileJSON["entities"]?["Pet"] == .parse("""
            {"attributes": {"id": "string", "kind": {"type": "string", "nullable": false}, "ownerName": "string",
                            "indoor": "bool", "breed": "string"}}
            """))
        #expect(imported.fileJSON["entities"]?["Cat"]?["attributes"]?["ownerName"] == "string")
        #expect(imported.fileJSON["routes"] == .parse(#"[{"path": "/pets", "target": "Pet"}]"#))
        #expect(imported.notes.map(\.description) == [
            "Pet at zoo.yaml #/components/schemas/Pet/oneOf: oneOf with discriminator 'kind': the union of the properties of Cat, Dog",
        ])
    }

    @Test("identity: a key named after the schema, else username; an inline object with an id is an entity named by its key")
    func identities() throws {
        let document = """
            {"openapi": "3.1.0", "info": {"title": "Ids", "version": "1"}, "paths": {},
             "components": {"schemas": {
               "Invoice": {"type": "object", "properties": {"invoiceId": {"type": "string"}, "total": {"type": "number", "format": "float"},
                                                            "customer": {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}},
                                                            "lines": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}}}}}},
               "Member": {"type": "object", "properties": {"username": {"type": "string"}, "karma": {"type": "integer"}}}}}}
            """
        // JSON content, whatever the name says.
        let imported = try Self.imported(document, source: "ids.yaml")
        #expect(imported.fileJSON["entities"] == .parse("""
            {"Invoice": {"primaryKey": "invoiceId", "jsonIdKey": "invoiceId",
                         "attributes": {"invoiceId": "string", "total": "double", "customerID": "integer", "lines": "json"},
                         "relationships": {"customer": {"toOne": "Customer", "foreignKey": "customerID"}}},
             "Member": {"primaryKey": "username", "jsonIdKey": "username", "attributes": {"username": "string", "karma": "integer"}},
             "Customer": {"attributes": {"id": "integer", "name": "string"}}}
            """))
        #expect(imported.notes.map(\.description) == [
            "Invoice.lines at ids.yaml #/components/schemas/Invoice/properties/lines: an array of objects without an id or "
                + "identity-like property: json",
        ])
    }

    @Test("inline objects with an id: one entity for the same object under two schemas; a name already taken stays in its parent, noted")
    func inlineEntities() throws {
        let document = """
            openapi: 3.1.0
            info: {title: Garage, version: "1"}
            paths: {}
            components:
              schemas:
                Car:
                  type: object
                  properties:
                    id: {type: integer}
                    owner: {type: object, properties: {id: {type: integer}, name: {type: string}}}
                    engine: {type: object, properties: {id: {type: string}, power: {type: number}}}
                Bike:
                  type: object
                  properties:
                    id: {type: integer}
                    owner: {type: object, properties: {id: {type: integer}}}
                Engine:
                  type: object
                  properties:
                    serial: {type: string}
            """
        let imported = try Self.imported(document, source: "garage.yaml")
        #expect(imported.schema.entities.map(\.name) == ["Car", "Bike", "Owner"])
        #expect(imported.fileJSON["entities"]?["Car"] == .parse("""
            {"attributes": {"id": "integer", "ownerID": "integer",
                            "engineId": {"type": "string", "jsonKey": "engine.id"},
                            "enginePower": {"type": "double", "jsonKey": "engine.power"}},
             "relationships": {"owner": {"toOne": "Owner", "foreignKey": "ownerID"}}}
            """))
        #expect(imported.fileJSON["entities"]?["Bike"]?["relationships"] == .parse(#"{"owner": {"toOne": "Owner", "foreignKey": "ownerID"}}"#))
        #expect(imported.notes.map(\.description) == [
            "Engine at garage.yaml #/components/schemas/Engine: an object without an id or identity-like property: not an entity",
            "Car.engine at garage.yaml #/components/schemas/Car/properties/engine: an object with an identity, but Engine names "
                + "another entity or component: kept in Car",
        ])
    }

    @Test("the format is read from the content: JSON named .yaml (one that YAML cannot read too), YAML named .json; 3.2 is read too")
    func formatFromContent() throws {
        // A key longer than 1024 characters is JSON but no YAML (a YAML simple key is shorter).
        let json = "{\n\t\"openapi\": \"3.0.3\",\n\t\"info\": {\"title\": \"T\", \"version\": \"1\"},\n\t\"paths\": {},\n"
            + "\t\"x-\(String(repeating: "k", count: 1100))\": true,\n"
            + "\t\"components\": {\"schemas\": {\"Note\": {\"type\": \"object\", \"properties\": {\"id\": {\"type\": \"integer\"}}}}}\n}\n"
        #expect(try Self.imported(json, source: "notes.yaml").schema.entities.map(\.name) == ["Note"])
        let yaml = """
            openapi: 3.2.0
            info: {title: T, version: "1"}
            paths:
              /notes/{id}:
                get:
                  responses:
                    '200':
                      description: a note
                      content: {application/json: {schema: {$ref: '#/components/schemas/Note'}}}
            components:
              schemas:
                Note: {type: object, properties: {id: {type: integer}, body: {type: string}}}
            """
        let imported = try Self.imported(yaml, source: "notes.json")
        #expect(imported.fileJSON["name"] == "notes")
        #expect(imported.fileJSON["routes"] == .parse(#"[{"path": "/notes/:id", "target": "Note"}]"#))
        #expect(imported.notes.isEmpty)
    }

    @Test("unmappable constructs are json, each noted with its pointer: external $ref, recursion, several types")
    func unmappable() throws {
        let document = """
            openapi: 3.1.0
            info: {title: Odd, version: "1"}
            paths: {}
            components:
              schemas:
                Thing:
                  type: object
                  properties:
                    id: {type: integer}
                    remote: {$ref: 'https://example.com/schemas/remote.json#/Remote'}
                    loop: {$ref: '#/components/schemas/Loop'}
                    either: {type: [string, integer]}
                Loop:
                  allOf: [{$ref: '#/components/schemas/Loop'}, {type: object, properties: {a: {type: string}}}]
            """
        let imported = try Self.imported(document, source: "odd.yaml")
        #expect(imported.fileJSON["entities"]?["Thing"] == .parse(#"{"attributes": {"id": "integer", "remote": "json", "loop": "json", "either": "json"}}"#))
        #expect(imported.notes.map(\.description) == [
            "Thing.remote at odd.yaml #/components/schemas/Thing/properties/remote/$ref: external $ref "
                + "https://example.com/schemas/remote.json#/Remote is not loaded: json",
            "Thing.loop at odd.yaml #/components/schemas/Loop: Loop is made of itself (recursive allOf, oneOf or $ref): json",
            "Thing.either at odd.yaml #/components/schemas/Thing/properties/either/type: several types (string, integer): json",
        ])
    }

    @Test("a Swagger 2.0 document is refused, naming the file and the pointer")
    func swagger2() throws {
        let error = #expect(throws: SchemaError.self) {
            _ = try Self.imported(#"{"swagger": "2.0", "info": {"title": "Old", "version": "1"}, "paths": {}}"#, source: "old.json")
        }
        #expect(error?.code == .invalidOpenAPI)
        #expect(error?.description == "old.json: /swagger: a Swagger 2.0 document: only OpenAPI 3 documents (3.0, 3.1, 3.2) are "
                + "imported (convert it to OpenAPI 3 first)")
    }

    @Test("malformed YAML names the file, line and column; a read error the file")
    func malformed() throws {
        let directory = try TemporaryDirectory("replica-openapi")
        defer { directory.remove() }
        let url = URL(fileURLWithPath: directory.path("broken.yaml"))
        try Data("openapi: 3.1.0\ninfo:\n  title: Broken\n   version: \"1\"\npaths: {}\n".utf8).write(to: url)
        let error = #expect(throws: SchemaError.self) { _ = try OpenAPISchemaImport.schema(contentsOf: url) }
        #expect(error?.code == .invalidOpenAPI)
        #expect(error?.file == url.relativePath)
        #expect(error?.message == "invalid YAML at line 4, column 11: mapping values are not allowed in this context")
        let missing = #expect(throws: SchemaError.self) {
            _ = try OpenAPISchemaImport.schema(contentsOf: URL(fileURLWithPath: directory.path("missing.yaml")))
        }
        #expect(missing?.code == .unreadableFile)
        #expect(missing?.file == directory.path("missing.yaml"))
    }

    @Test("no openapi version, an unknown version, malformed JSON, a document breaking the format: each refused with where")
    func notOpenAPI() throws {
        func failure(_ text: String) -> SchemaError? {
            #expect(throws: SchemaError.self) { _ = try Self.imported(text, source: "api.json") }
        }
        #expect(failure(#"{"name": "x"}"#)?.description
                == "api.json: /: not an OpenAPI document: no 'openapi' version (OpenAPI 3.0, 3.1 and 3.2 are imported)")
        #expect(failure(#"{"openapi": "4.0.0", "info": {"title": "t", "version": "1"}, "paths": {}}"#)?.description
                == "api.json: /openapi: OpenAPI 4.0.0 is not imported: only OpenAPI 3.0.x, 3.1.x and 3.2.x documents are")
        #expect(failure(#"{"openapi": "3.1.0", "paths": {"#)?.message.hasPrefix("not valid JSON: ") == true)
        let broken = failure("openapi: 3.1.0\ninfo: {title: Bad, version: '1'}\npaths:\n  /pets:\n    get:\n      responses: 7\n")
        #expect(broken?.code == .invalidOpenAPI)
        #expect(broken?.pointer?.description == "/paths/~1pets/get/responses")
        #expect(broken?.message.hasPrefix("not a valid OpenAPI document: ") == true)
    }
}
