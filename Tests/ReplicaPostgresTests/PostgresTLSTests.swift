import Foundation
import Logging
import PostgresNIO
import Replica
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// TLS to PostgreSQL against a second throwaway cluster with `ssl=on` and a certificate for
/// `localhost` (no IP address) signed by a CA made at test time; the shared cluster has no TLS.
@Suite("PostgreSQL over TLS")
struct PostgresTLSTests {
    /// A new database on the TLS cluster: its URL with `host` and the query `parameters`.
    static func database(host: String = "127.0.0.1", _ parameters: String) async throws -> String {
        let url = try await PostgresCluster.startTLS().makeDatabase().replacingOccurrences(of: "@127.0.0.1:", with: "@\(host):")
        return url + (parameters.isEmpty ? "" : "?" + parameters)
    }

    /// The TLS cluster's CA and server certificates.
    static func tlsFiles() async throws -> PostgresCluster.TLSFiles {
        try #require(try await PostgresCluster.startTLS().tls)
    }

    /// What the server says of one connection made as the replica makes them:
    /// `pg_stat_ssl.ssl` for its own backend.
    static func isEncrypted(_ url: String) async throws -> Bool {
        let logger = Logger(label: "Replica.tests.tls", factory: { _ in SwiftLogNoOpLogHandler() })
        let connections = try PostgresConnections(url: PostgresURL(url), logger: logger)
        return try await withTeardown {
            try await connections.withConnection { connection in
                var encrypted: [Bool] = []
                let rows = try await connection.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: logger)
                for try await ssl in rows.decode(Bool.self) { encrypted.append(ssl) }
                try #require(encrypted.count == 1)
                return encrypted[0]
            }
        } teardown: {
            await connections.close()
        }
    }

    /// The replica's own sessions on `url`'s database as the server sees them, from a psql
    /// session of its own: how many, and how many are encrypted.
    static func replicaSessions(_ url: String) async throws -> (all: Int, encrypted: Int) {
        let cluster = try await PostgresCluster.startTLS()
        let plain = try #require(url.split(separator: "?").first.map(String.init))
        let counts = try cluster.psql(plain, """
            SELECT count(*) || ' ' || count(*) FILTER (WHERE s.ssl) FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
            WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.backend_type = 'client backend'
            """).split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        try #require(counts.count == 2)
        return (counts[0], counts[1])
    }

    @Test("sslmode=require syncs and reads through a PostgresReplica, observed over LISTEN, every session encrypted")
    func requireSyncsEncrypted() async throws {
        let url = try await Self.database("sslmode=require")
        #expect(try await Self.isEncrypted(url))
        let schema = try TestStore.schema()
        let replica = try await PostgresReplica.open(url: url, schema: schema)
        let watcher = try await PostgresReplica.open(url: url, schema: schema)
        try await withTeardown {
            var changes = await watcher.changes(for: ["Person"]).makeAsyncIterator()
            let result = try await replica.sync(.get, "/people", body: peopleJSON([(1, "Ann", 2), (2, "Bob", nil)]))
            #expect(result.changes["Person"]?.inserted.count == 2)
            let seen = try #require(await changes.next())
            #expect(seen["Person"]?.inserted.integers == [1, 2])
            let names = try await watcher.rows(RowQuery("Person", sort: [.ascending("name")])).map { $0["name"] }
            #expect(names == [.string("Ann"), .string("Bob")])
            let sessions = try await Self.replicaSessions(url)
            // Each replica's pooled connection and the watcher's LISTEN connection at least.
            #expect(sessions.all >= 3)
            #expect(sessions.encrypted == sessions.all)
        } teardown: {
            await watcher.close()
            await replica.close()
        }
    }

    @Test("sslmode=verify-full with the cluster's CA connects to localhost, the name in its certificate")
    func verifyFullLocalhost() async throws {
        let tls = try await Self.tlsFiles()
        let url = try await Self.database(host: "localhost", "sslmode=verify-full&sslrootcert=\(tls.caCertificate)")
        #expect(try await Self.isEncrypted(url))
        let replica = try await PostgresReplica.open(url: url, schema: try TestStore.schema())
        try await withTeardown {
            _ = try await replica.sync(.get, "/people", body: peopleJSON([(1, "Ann", 2)]))
            #expect(try await replica.rows(RowQuery("Person")).map { $0["name"] } == [.string("Ann")])
            #expect(replica.url.description.hasSuffix("?sslmode=verify-full&sslrootcert=\(tls.caCertificate)"))
        } teardown: {
            await replica.close()
        }
    }

    @Test("sslmode=verify-ca checks the chain, not the host: 127.0.0.1 connects with the right CA")
    func verifyCAIgnoresHost() async throws {
        let tls = try await Self.tlsFiles()
        let url = try await Self.database("sslmode=verify-ca&sslrootcert=\(tls.caCertificate)")
        #expect(try await Self.isEncrypted(url))
    }

    @Test("sslmode=verify-full to 127.0.0.1, which the certificate does not name, fails with tlsFailed naming the host")
    func verifyFullWrongHost() async throws {
        let tls = try await Self.tlsFiles()
        let url = try await Self.database("sslmode=verify-full&sslrootcert=\(tls.caCertificate)")
        let refused = await #expect(throws: PostgresStoreError.self) {
            _ = try await PostgresReplica.open(url: url, schema: try TestStore.schema())
        }
        #expect(refused?.code == .tlsFailed)
        #expect(refused?.url == url)
        #expect(refused?.message == "certificate verify failed: the server's certificate does not name the host '127.0.0.1' "
                + "(sslmode=verify-full)")
    }

    @Test("a certificate signed by another CA fails under verify-full, verify-ca and require with sslrootcert")
    func otherCA() async throws {
        let tls = try await Self.tlsFiles()
        for (host, mode) in [("localhost", "verify-full"), ("127.0.0.1", "verify-ca"), ("127.0.0.1", "require")] {
            let url = try await Self.database(host: host, "sslmode=\(mode)&sslrootcert=\(tls.otherCACertificate)")
            let refused = await #expect(throws: PostgresStoreError.self) {
                _ = try await PostgresReplica.open(url: url, schema: try TestStore.schema())
            }
            #expect(refused?.code == .tlsFailed, "\(mode)")
            #expect(refused?.description == "\(url): certificate verify failed: the server's certificate does not chain to "
                    + "a CA of sslrootcert=\(tls.otherCACertificate), or is expired or not yet valid (sslmode=\(mode))")
        }
    }

    @Test("sslmode=require against the shared cluster, which has no TLS, fails clearly; prefer goes on unencrypted")
    func requireWithoutServerTLS() async throws {
        let plain = try await PostgresCluster.start().makeDatabase()
        let url = plain.replacingOccurrences(of: "postgres@", with: "postgres:hunter2@") + "?sslmode=require"
        let refused = await #expect(throws: PostgresStoreError.self) {
            _ = try await PostgresReplica.open(url: url, schema: try TestStore.schema())
        }
        #expect(refused?.code == .tlsFailed)
        #expect(refused?.description == "\(plain)?sslmode=require: the server does not support TLS (sslmode=require)")
        #expect(try await Self.isEncrypted(plain + "?sslmode=prefer") == false)
        #expect(try await Self.isEncrypted(plain + "?sslmode=allow") == false)
        #expect(try await Self.isEncrypted(plain) == false)
    }

    @Test("sslmode=disable against the TLS cluster connects unencrypted; no sslmode (prefer) encrypts")
    func disableAndDefault() async throws {
        let url = try await Self.database("sslmode=disable")
        #expect(try await Self.isEncrypted(url) == false)
        let replica = try await PostgresReplica.open(url: url, schema: try TestStore.schema())
        try await withTeardown {
            _ = try await replica.sync(.get, "/people", body: peopleJSON([(1, "Ann", 2)]))
            let sessions = try await Self.replicaSessions(url)
            #expect(sessions.all >= 1)
            #expect(sessions.encrypted == 0)
        } teardown: {
            await replica.close()
        }
        let preferred = try await Self.database("")
        #expect(try await Self.isEncrypted(preferred))
    }

    @Test("replica import and query take a verify-full URL; a wrong CA is a clear error without the password")
    func commandLine() async throws {
        let tls = try await Self.tlsFiles()
        let url = try await Self.database(host: "localhost", "sslmode=verify-full&sslrootcert=\(tls.caCertificate)")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("people-\(UUID().uuidString).json")
        try peopleJSON([(1, "Ann", 2), (2, "Bob", 0)]).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let schemaPath = packageRoot.appendingPathComponent("Schemas/people.json").path

        let imported = await PostgresCLITests.run(["import", "--db", url, "--schema", schemaPath, "--entity", "Person", file.path])
        #expect(imported.ok, "\(imported.output)")
        #expect(imported.output.hasPrefix("inserted 2, updated 0, deleted 0, skipped 0 (2 objects, "))
        let query = await PostgresCLITests.run(["query", "--db", url, "Person", "--sort", "name", "--format", "ndjson"])
        #expect(query.ok, "\(query.output)")
        #expect(query.output.contains(#""name":"Ann""#) && query.output.contains(#""name":"Bob""#))

        let wrong = url.replacingOccurrences(of: "postgres@", with: "postgres:hunter2@")
            .replacingOccurrences(of: tls.caCertificate, with: tls.otherCACertificate)
        let refused = await PostgresCLITests.run(["query", "--db", wrong, "Person"])
        #expect(!refused.ok)
        #expect(refused.output.contains("sslmode=verify-full&sslrootcert=\(tls.otherCACertificate): certificate verify failed"))
        #expect(!refused.output.contains("hunter2"))
    }
}
