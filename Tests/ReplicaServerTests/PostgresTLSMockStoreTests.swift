import Foundation
import Replica
import ReplicaServer
import ReplicaServerPostgres
import ReplicaTestSupport
import Testing

/// The mock server's PostgreSQL store over TLS (`replica serve --store 'postgres://…?sslmode=…'`).
@Suite("PostgresMockStore over TLS")
struct PostgresTLSMockStoreTests {
    @Test("a verify-full URL serves and stores objects over encrypted connections; a missing sslrootcert is storeFailed")
    func verifyFull() async throws {
        let cluster = try await PostgresCluster.startTLS()
        let tls = try #require(cluster.tls)
        let plain = try await cluster.makeDatabase()
        let url = plain.replacingOccurrences(of: "@127.0.0.1:", with: "@localhost:")
            + "?sslmode=verify-full&sslrootcert=\(tls.caCertificate)"
        let store = try PostgresMockStore(url: url)
        #expect(store.url.description.hasSuffix("?sslmode=verify-full&sslrootcert=\(tls.caCertificate)"))
        try await withServer(try Fixture.peopleResources, options: MockServerOptions(store: store)) { _, client in
            let created = try await client.post("/people", #"{"name": "Ann"}"#)
            #expect(created.status == 201)
            #expect(try await client.get("/people").json?.arrayValue?.count == 1)
            let sessions = try cluster.psql(plain, """
                SELECT count(*) || ' ' || count(*) FILTER (WHERE s.ssl) FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
                WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.backend_type = 'client backend'
                """).split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
            #expect(sessions.count == 2 && sessions[0] >= 1 && sessions[0] == sessions[1], "\(sessions)")
        }
        await store.close()

        let missing = url.replacingOccurrences(of: tls.caCertificate, with: tls.directory + "/missing.pem")
        #expect { _ = try PostgresMockStore(url: missing) } throws: { error in
            let failed = try #require(error as? MockServerError)
            return failed.code == .storeFailed && "\(failed)".contains("sslrootcert: no file at '\(tls.directory)/missing.pem'")
        }
    }
}
