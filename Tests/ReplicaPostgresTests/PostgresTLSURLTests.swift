import Foundation
import Replica
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// `?sslmode=` and `?sslrootcert=` of a `postgres://` URL: parsed as libpq names them, shown in
/// the description, refused with an error naming the parameter.
@Suite("PostgreSQL URL TLS parameters")
struct PostgresTLSURLTests {
    @Test("every sslmode is parsed and kept in the description, without the password")
    func modes() throws {
        for mode in PostgresURL.SSLMode.allCases {
            let url = try PostgresURL("postgres://app:s3cret@db.internal:6543/cache?sslmode=\(mode.rawValue)&sslrootcert=ca.pem")
            #expect(url.sslMode == mode)
            #expect(url.effectiveSSLMode == mode)
            #expect(url.sslRootCert == "ca.pem")
            #expect(url.password == "s3cret")
            #expect(url.description == "postgres://app@db.internal:6543/cache?sslmode=\(mode.rawValue)&sslrootcert=ca.pem")
        }
        let require = try PostgresURL("postgres://app@db/cache?sslmode=require")
        #expect(require.sslMode == .require)
        #expect(require.sslRootCert == nil)
        #expect(require.description == "postgres://app@db:5432/cache?sslmode=require")
        #expect(PostgresURL.SSLMode.verifyFull.rawValue == "verify-full")
        #expect(PostgresURL.SSLMode.verifyCA.rawValue == "verify-ca")
    }

    @Test("with no sslmode the mode is prefer (verify-full with sslrootcert=system) and the description adds nothing")
    func defaults() throws {
        let plain = try PostgresURL("postgres://app:pw@127.0.0.1:5432/cache")
        #expect(plain.sslMode == nil)
        #expect(plain.sslRootCert == nil)
        #expect(plain.effectiveSSLMode == .prefer)
        #expect(plain.description == "postgres://app@127.0.0.1:5432/cache")

        let system = try PostgresURL("postgres://app@db.example.com/cache?sslrootcert=system")
        #expect(system.sslMode == nil)
        #expect(system.effectiveSSLMode == .verifyFull)
        #expect(system.description == "postgres://app@db.example.com:5432/cache?sslrootcert=system")

        let file = try PostgresURL("postgres://app@db/cache?sslrootcert=ca.pem")
        #expect(file.effectiveSSLMode == .prefer)

        let parts = PostgresURL(host: "db", username: "app", password: "pw", database: "cache", sslMode: .verifyCA,
                                sslRootCert: "/etc/ca.pem")
        #expect(parts.description == "postgres://app@db:5432/cache?sslmode=verify-ca&sslrootcert=/etc/ca.pem")
    }

    @Test("a percent-encoded sslrootcert path is decoded, and encoded again in the description")
    func encodedPath() throws {
        let url = try PostgresURL("postgresql://app@db/cache?sslrootcert=/etc/my%20certs/ca%26more.pem&sslmode=verify-ca")
        #expect(url.sslRootCert == "/etc/my certs/ca&more.pem")
        #expect(url.description == "postgres://app@db:5432/cache?sslmode=verify-ca&sslrootcert=/etc/my%20certs/ca%26more.pem")
        #expect(try PostgresURL(url.description) == url)
    }

    @Test("an unknown sslmode, an unknown or repeated parameter and impossible combinations are invalidURL errors naming them")
    func errors() throws {
        func failure(_ text: String) -> PostgresStoreError? {
            #expect(throws: PostgresStoreError.self) { try PostgresURL(text) }
        }
        let mode = failure("postgres://app:hunter2@db/cache?sslmode=required")
        #expect(mode?.code == .invalidURL)
        #expect(mode?.description == "postgres://app@db/cache?sslmode=required: invalid sslmode value 'required' "
                + "(expected one of: disable, allow, prefer, require, verify-ca, verify-full)")

        let unknown = failure("postgres://app:hunter2@db/cache?sslmode=require&sslcert=client.pem")
        #expect(unknown?.code == .invalidURL)
        #expect(unknown?.message == "unknown URL parameter 'sslcert' (Replica reads sslmode and sslrootcert)")

        let password = failure("postgres://app@db/cache?password=hunter2")
        #expect(password?.message == "unknown URL parameter 'password' (Replica reads sslmode and sslrootcert)")
        #expect(password?.description.contains("hunter2") == false)
        #expect(password?.url == "postgres://app@db/cache?password=…")

        let twice = failure("postgres://app@db/cache?sslmode=require&sslmode=disable")
        #expect(twice?.message == "the URL parameter 'sslmode' is given twice")

        let empty = failure("postgres://app@db/cache?sslrootcert=")
        #expect(empty?.message == "sslrootcert is empty (expected a PEM file of CA certificates, or system)")

        for verify in ["verify-ca", "verify-full"] {
            let noRoot = failure("postgres://app:hunter2@db/cache?sslmode=\(verify)")
            #expect(noRoot?.code == .invalidURL)
            #expect(noRoot?.description == "postgres://app@db/cache?sslmode=\(verify): sslmode=\(verify) needs sslrootcert=FILE "
                    + "(a PEM file of the CA certificates to trust) or sslrootcert=system")
        }

        let weak = failure("postgres://app@db/cache?sslmode=require&sslrootcert=system")
        #expect(weak?.message == "sslmode=require may not be used with sslrootcert=system (use sslmode=verify-full)")
    }

    @Test("an sslrootcert file that is missing, a folder or holds no certificate fails opening with invalidURL, before connecting")
    func rootCertificateFiles() async throws {
        let directory = try TemporaryDirectory("replica-tls-url")
        defer { directory.remove() }
        let schema = try TestStore.schema()
        // Nothing listens there: the file is read before any connection is tried.
        let base = "postgres://app:hunter2@127.0.0.1:\(try PostgresCluster.freePort())/cache?sslmode=verify-full&sslrootcert="

        let missing = directory.path("missing.pem")
        let absent = await #expect(throws: PostgresStoreError.self) {
            _ = try await PostgresReplica.open(url: base + missing, schema: schema)
        }
        #expect(absent?.code == .invalidURL)
        #expect(absent?.message == "sslrootcert: no file at '\(missing)'")
        #expect(absent?.description.contains("hunter2") == false)
        #expect(absent?.url.hasSuffix("?sslmode=verify-full&sslrootcert=\(missing)") == true)

        let folder = await #expect(throws: PostgresStoreError.self) {
            _ = try await PostgresReplica.open(url: base + directory.path, schema: schema)
        }
        #expect(folder?.message == "sslrootcert: cannot read '\(directory.path)'")

        let notPEM = directory.path("not.pem")
        try Data("this is no certificate\n".utf8).write(to: URL(fileURLWithPath: notPEM))
        let invalid = await #expect(throws: PostgresStoreError.self) {
            _ = try await PostgresReplica.open(url: base + notPEM, schema: schema)
        }
        #expect(invalid?.code == .invalidURL)
        #expect(invalid?.message == "sslrootcert: '\(notPEM)' holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)")
    }
}
