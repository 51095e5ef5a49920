import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Date transforms")
struct MappingDateTests {
    static func seconds(_ json: JSONValue, transform: String? = nil) throws -> Double? {
        guard case .date(let date)? = try MappingCoercionTests.convert(json, to: .date, transform: transform) else { return nil }
        return date.timeIntervalSince1970
    }

    static let may1 = MappingFixtures.date(2024, 5, 1, 12, 34, 56).timeIntervalSince1970

    static let isoCases: [(String, Double)] = [
        ("2024-05-01T12:34:56Z", 0.0),
        ("2024-05-01T12:34:56", 0.0),
        ("2024-05-01 12:34:56", 0.0),
        ("2024-05-01T12:34:56.789Z", 0.789),
        ("2024-05-01T12:34:56.5", 0.5),
        ("2024-05-01T14:34:56+02:00", 0.0),
        ("2024-05-01T07:04:56-0530", 0.0),
        ("2024-05-01T13:34:56.25+01", 0.25),
        ("2024-05-01T12:34Z", -56.0),
        ("2024-05-01", -45296.0),
    ]

    @Test("ISO 8601 with and without fractional seconds and zones", arguments: isoCases)
    func iso8601(text: String, offset: Double) throws {
        let value = try #require(try Self.seconds(.string(text)))
        #expect(abs(value - (Self.may1 + offset)) < 1e-6)
        let forced = try #require(try Self.seconds(.string(text), transform: "iso8601"))
        #expect(abs(forced - (Self.may1 + offset)) < 1e-6)
    }

    @Test("February 29 exists in leap years only")
    func leapDays() throws {
        #expect(try Self.seconds("2024-02-29") == MappingFixtures.date(2024, 2, 29).timeIntervalSince1970)
        #expect(try Self.seconds("2000-02-29T00:00:00Z") == MappingFixtures.date(2000, 2, 29).timeIntervalSince1970)
        for text in ["2023-02-29", "1900-02-29", "2024-02-30", "2024-04-31", "2024-13-01", "2024-05-01T24:00:00Z",
                     "2024-05-01T12:60:00Z", "2024-5-1", "yesterday", "2024-05-01T12:34:56+25:00"] {
            let error = MappingCoercionTests.failure(.string(text), to: .date)
            #expect(error?.code == .invalidValue, "\(text)")
            #expect(error?.message == "cannot convert \"\(text)\" to date "
                + "(expected ISO 8601 text or Unix seconds or milliseconds)", "\(text)")
        }
    }

    static let unixCases: [(JSONValue, Double)] = [
        (JSONValue.int(1_714_566_896), 1_714_566_896.0),
        (.double(1_714_566_896.5), 1_714_566_896.5),
        (.int(1_714_566_896_789), 1_714_566_896.789),
        (.string("1714566896"), 1_714_566_896),
        (.string("1714566896789"), 1_714_566_896.789),
        (.int(99_999_999_999), 99_999_999_999),
        (.int(100_000_000_000), 100_000_000),
        (.int(-100_000_000_000), -100_000_000),
        (.int(0), 0),
    ]

    @Test("numbers below 1e11 are Unix seconds, at or above are milliseconds", arguments: unixCases)
    func unixNumbers(json: JSONValue, expected: Double) throws {
        #expect(try Self.seconds(json) == expected)
    }

    @Test("unixSeconds and unixMilliseconds force the unit")
    func forcedUnits() throws {
        #expect(try Self.seconds(200_000_000_000, transform: "unixSeconds") == 200_000_000_000)
        #expect(try Self.seconds(200_000_000_000) == 200_000_000)
        #expect(try Self.seconds(86_400_000, transform: "unixMilliseconds") == 86_400)
        #expect(try Self.seconds("86400000", transform: "unixMilliseconds") == 86_400)
        #expect(try Self.seconds(1.5, transform: "unixSeconds") == 1.5)
        let error = MappingCoercionTests.failure("2024-05-01", to: .date, transform: "unixSeconds")
        #expect(error?.message == #"cannot convert "2024-05-01" to date (expected Unix seconds)"#)
        let iso = MappingCoercionTests.failure(1_714_566_896, to: .date, transform: "iso8601")
        #expect(iso?.message == "cannot convert 1714566896 to date (expected ISO 8601 text)")
    }

    @Test("dates outside the years 0000 to 9999 are refused with the pointer; printing one never traps",
          arguments: [JSONValue.double(1e22), .double(-1e22), .int(Int64.max), .double(1e300)])
    func outOfRange(json: JSONValue) async throws {
        let error = MappingCoercionTests.failure(json, to: .date, transform: "unixSeconds")
        #expect(error?.message == "cannot convert \(json.serialized()) to date (outside the years 0000 to 9999)")
        let blog = try BlogFixture()
        let sync = await #expect(throws: SyncError.self) {
            try await blog.sync("/users", #"[{"user_id": 1, "name": "A", "created_at": \#(json.serialized())}]"#)
        }
        #expect(sync?.message.contains("User.createdAt at /0/created_at") == true, "\(sync.map(String.init(describing:)) ?? "")")
        #expect(try blog.store.count("User") == 0)
        let far = AttributeValue.date(Date(timeIntervalSince1970: 1e22))
        #expect(far.description == "1e+22 s since 1970")
        #expect(far.jsonValue == .double(1e22))
        #expect(AttributeValue.date(Date(timeIntervalSince1970: 253_402_300_799)).description == "9999-12-31T23:59:59Z")
    }

    @Test("date:FORMAT parses with a POSIX UTC formatter")
    func customFormat() throws {
        let transform = "date:yyyy-MM-dd HH:mm"
        #expect(try Self.seconds("2024-05-01 12:34", transform: transform)
            == MappingFixtures.date(2024, 5, 1, 12, 34).timeIntervalSince1970)
        #expect(try Self.seconds("2024-02-29 00:00", transform: transform)
            == MappingFixtures.date(2024, 2, 29).timeIntervalSince1970)
        for text in ["2024-05-01T12:34", "2024-02-30 10:00", "2023-02-29 10:00", "01/05/2024 12:34"] {
            let error = MappingCoercionTests.failure(.string(text), to: .date, transform: transform)
            #expect(error?.message == "cannot convert \"\(text)\" to date (expected the format 'yyyy-MM-dd HH:mm')", "\(text)")
        }
        #expect(try Self.seconds("01 May 2024", transform: "date:dd MMM yyyy")
            == MappingFixtures.date(2024, 5, 1).timeIntervalSince1970)
    }

    @Test("date transforms need a date attribute; unknown names are errors at build time")
    func buildErrors() throws {
        let schema = try MappingFixtures.thing([Attribute("count", .integer, transform: "unixSeconds")])
        let error = MappingFixtures.mappingError { _ = try MappingFixtures.map("Thing", in: schema) }
        #expect(error?.code == .invalidTransform)
        #expect(error?.description == "Thing.count: transform 'unixSeconds' needs a date attribute, not an integer")
        let empty = try MappingFixtures.thing([Attribute("at", .date, transform: "date:")])
        #expect(MappingFixtures.mappingError { _ = try MappingFixtures.map("Thing", in: empty) }?.code == .invalidTransform)
        let percent = try MappingFixtures.thing([Attribute("p", .string, transform: "percentage")])
        #expect(MappingFixtures.mappingError { _ = try MappingFixtures.map("Thing", in: percent) }?.description
            == "Thing.p: transform 'percentage' needs a double attribute, not a string")
    }
}
