import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// Schemas and helpers shared by the mapping tests.
enum MappingFixtures {
    /// `Schemas/blog.json`.
    static func blog() throws -> Schema {
        try Schema(contentsOf: TestSupport.schemaFile("blog.json"))
    }

    /// The property map of `entity` in `schema`.
    static func map(_ entity: String, in schema: Schema, transforms: TransformRegistry = TransformRegistry()) throws -> PropertyMap {
        try PropertyMap(entity: schema.requireEntity(entity), in: schema, transforms: transforms)
    }

    /// A one-entity schema `Thing` with an integer `id` and the given attributes.
    static func thing(_ attributes: [Attribute], keyConvention: KeyConvention = .snakeCase,
                      namespace: String? = nil, collectionNamespace: String? = nil) throws -> Schema {
        try Schema(name: "things", keyConvention: keyConvention, entities: [
            Entity("Thing", namespace: namespace, collectionNamespace: collectionNamespace) {
                Attribute("id", .integer)
                for attribute in attributes { attribute }
            },
        ])
    }

    /// The property map of `Thing` with one more attribute.
    static func thingMap(_ attributes: Attribute..., transforms: TransformRegistry = TransformRegistry()) throws -> PropertyMap {
        try map("Thing", in: thing(attributes), transforms: transforms)
    }

    /// The error `body` throws, which must be a ``MappingError``.
    static func mappingError(_ body: () throws -> Void) -> MappingError? {
        do {
            try body()
            return nil
        } catch let error as MappingError {
            return error
        } catch {
            Issue.record("expected a MappingError, got \(error)")
            return nil
        }
    }

    /// `Date` for a UTC calendar date and time.
    static func date(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Date {
        let days = ISO8601.daysFromCivil(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: Double(days * 86400 + hour * 3600 + minute * 60 + second))
    }
}
