import Foundation
import Replica
import ReplicaExamples
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// The README's Architecture example: one function, written against `any ReplicaStore`, run on both stores.
@Suite("README Architecture example, run")
struct StoreProtocolExampleTests {
    static let page = Data(#"[{"id": 2, "name": "bob"}, {"id": 1, "name": "ann"}]"#.utf8)

    static func schema() throws -> Schema {
        try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/people.json"))
    }

    @Test("on SQLite: the page is synced in one transaction and the live result set shows both people")
    func sqlite() async throws {
        let replica = try SQLiteReplica(store: Store.inMemory(schema: Self.schema()))
        #expect(try await storeProtocolExample(store: replica, page: Self.page) == 2)
        let names = try await replica.rows(RowQuery("Person", sort: [.ascending("name")])).map { $0["name"] }
        #expect(names == [.string("ann"), .string("bob")])
    }

    @Test("on PostgreSQL: the same function, the same results")
    func postgres() async throws {
        let url = try await PostgresCluster.start().makeDatabase()
        let replica = try await PostgresReplica.open(url: url, schema: Self.schema())
        let count: Int
        let names: [AttributeValue?]
        do {
            count = try await storeProtocolExample(store: replica, page: Self.page)
            names = try await replica.rows(RowQuery("Person", sort: [.ascending("name")])).map { $0["name"] }
        } catch {
            await replica.close()
            throw error
        }
        await replica.close()
        #expect(count == 2)
        #expect(names == [.string("ann"), .string("bob")])
    }
}
