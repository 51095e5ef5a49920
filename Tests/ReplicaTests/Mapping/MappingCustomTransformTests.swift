import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Custom transforms")
struct MappingCustomTransformTests {
    struct NotAnAmount: Error, CustomStringConvertible {
        var description: String { "not an amount" }
    }

    static let transforms = TransformRegistry()
        .registering("cents", encode: { value in
            guard case .integer(let cents) = value else { return value.jsonValue }
            return .double(Double(cents) / 100)
        }) { json in
            guard let amount = Coercion.double(json) else { throw NotAnAmount() }
            return .integer(Int64((amount * 100).rounded()))
        }
        .registering("upper") { json in
            guard case .string(let text) = json else {
                throw MappingError(.invalidValue, "expected text for 'upper'")
            }
            return .string(text.uppercased())
        }
        .registering("blankIsNull") { json in
            json == "" ? .null : .string(json.stringValue ?? "")
        }
        .registering("alwaysText") { _ in .string("text") }
        .registering("count") { _ in .integer(3) }

    static let schemaJSON = """
        {"name": "shop", "entities": {"Product": {"attributes": {
            "id": "integer",
            "price": {"type": "integer", "transform": "cents"},
            "code": {"type": "string", "transform": "upper"},
            "note": {"type": "string", "transform": "blankIsNull"},
            "sku": {"type": "string", "nullable": false, "transform": "blankIsNull"},
            "weight": {"type": "double", "transform": "count"},
            "size": {"type": "integer", "transform": "alwaysText"}
        }}}}
        """

    static func products() throws -> PropertyMap {
        let schema = try Schema(json: Data(schemaJSON.utf8))
        return try SchemaMapping(schema: schema, transforms: transforms).requireMap("Product")
    }

    @Test("a registered transform named in a schema file converts values")
    func registeredAndUsed() throws {
        let products = try Self.products()
        let mapped = try products.map(["id": 1, "price": "12.34", "code": "ab-1", "note": "", "weight": 9], at: .root)
        #expect(mapped["price"] == .integer(1234))
        #expect(mapped["code"] == .string("AB-1"))
        #expect(mapped["note"] == .null)
        #expect(mapped["weight"] == .double(3))
        #expect(Self.transforms.names == ["alwaysText", "blankIsNull", "cents", "count", "upper"])
        #expect(Self.transforms["cents"]?.name == "cents")
        #expect(Self.transforms["nope"] == nil)
    }

    @Test("a custom transform's errors carry entity, attribute, pointer and value")
    func failures() throws {
        let products = try Self.products()
        let pointer = JSONPointer("/products/2")!
        let thrown = MappingFixtures.mappingError { _ = try products.map(["price": "lots"], at: pointer) }
        #expect(thrown?.code == .invalidValue)
        #expect(thrown?.description == #"Product.price at /products/2/price: transform 'cents' failed on "lots": not an amount"#)
        let mappingError = MappingFixtures.mappingError { _ = try products.map(["code": 5], at: pointer) }
        #expect(mappingError?.description == "Product.code at /products/2/code: expected text for 'upper'")
        #expect(mappingError?.value == "5")
        let null = MappingFixtures.mappingError { _ = try products.map(["sku": ""], at: pointer) }
        #expect(null?.code == .nullNotAllowed)
        #expect(null?.pointer == JSONPointer("/products/2/sku"))
        let wrongType = MappingFixtures.mappingError { _ = try products.map(["size": 4], at: pointer) }
        #expect(wrongType?.description == "Product.size at /products/2/size: transform 'alwaysText' turned 4 into a string, not an integer")
    }

    @Test("transforms never see null")
    func nullBypassesTransforms() throws {
        let products = try Self.products()
        #expect(try products.map(["code": nil], at: .root)["code"] == .null)
    }

    @Test("a registered name overrides the built-in one")
    func overridesBuiltIn() throws {
        let transforms = TransformRegistry().registering("percentage") { _ in .double(-1) }
        let map = try MappingFixtures.thingMap(Attribute("p", .double, transform: "percentage"), transforms: transforms)
        #expect(try map.map(["p": "45%"], at: .root)["p"] == .double(-1))
    }

    @Test("an unknown transform name fails the build naming entity and attribute")
    func unknownTransform() throws {
        let schema = try Schema(json: Data(Self.schemaJSON.utf8))
        let error = MappingFixtures.mappingError { _ = try SchemaMapping(schema: schema) }
        #expect(error?.code == .unknownTransform)
        #expect(error?.entity == "Product")
        #expect(error?.attribute == "price")
        #expect(error?.description == "Product.price: unknown transform 'cents' "
            + "(known: percentage, base64, iso8601, unixSeconds, unixMilliseconds, date:FORMAT)")
    }

    @Test("encoding uses the transform's encoder, or the type's default")
    func encoding() throws {
        let products = try Self.products()
        #expect(products.encode(["price": .integer(1234), "code": .string("AB")]) == ["price": 12.34, "code": "AB"])
        #expect(products.encode(["price": .null]) == ["price": nil])
    }
}
