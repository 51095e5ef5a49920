import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension PostgresCluster {
    /// The TLS cluster of this test process (`ssl=on`, a certificate for `localhost` signed by a
    /// CA made at test time), started on first use and stopped at exit like ``shared``.
    package static let sharedTLS: Result<PostgresCluster, ClusterError> = Result { try PostgresCluster(tls: true) }.mapError {
        ($0 as? ClusterError) ?? ClusterError(message: "\($0)")
    }

    /// The TLS cluster, or an error saying why it cannot start (a failing test, never a skipped one).
    ///
    /// ```swift
    /// let cluster = try await PostgresCluster.startTLS()
    /// let url = try await cluster.makeDatabase().replacingOccurrences(of: "127.0.0.1", with: "localhost")
    ///     + "?sslmode=verify-full&sslrootcert=" + (cluster.tls?.caCertificate ?? "")
    /// ```
    package static func startTLS() async throws -> PostgresCluster { try await detached { try sharedTLS.get() } }

    /// The certificates of a TLS cluster, made with `openssl` in a folder of the cluster's.
    package struct TLSFiles: Sendable {
        /// Where the files are.
        package let directory: String
        /// The CA that signed the server's certificate (PEM).
        package var caCertificate: String { directory + "/ca.pem" }
        /// Another self-signed CA, which signed nothing the server presents (PEM).
        package var otherCACertificate: String { directory + "/other-ca.pem" }
        /// The server's certificate: subject and only name `localhost` (no IP address).
        package var serverCertificate: String { directory + "/server.pem" }
        /// The server's private key, mode 0600.
        package var serverKey: String { directory + "/server.key" }

        /// Makes a CA, a server key and certificate for `localhost` signed by it, and another CA,
        /// in `directory` (created).
        ///
        /// - Throws: `ClusterError` when `openssl` is missing or fails.
        package static func make(in directory: String) throws -> TLSFiles {
            let openssl = try findOpenSSL()
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let files = TLSFiles(directory: directory)
            let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
            let caExtensions = ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"]
            try PostgresCluster.run(openssl, ["req", "-x509"] + curve + caExtensions
                                    + ["-keyout", directory + "/ca.key", "-out", files.caCertificate, "-days", "2",
                                       "-subj", "/CN=Replica test CA"])
            try PostgresCluster.run(openssl, ["req", "-x509"] + curve + caExtensions
                                    + ["-keyout", directory + "/other-ca.key", "-out", files.otherCACertificate, "-days", "2",
                                       "-subj", "/CN=Replica other test CA"])
            try PostgresCluster.run(openssl, ["req", "-new"] + curve
                                    + ["-keyout", files.serverKey, "-out", directory + "/server.csr", "-subj", "/CN=localhost"])
            let extensions = directory + "/server.ext"
            try Data("""
                subjectAltName = DNS:localhost
                basicConstraints = critical, CA:FALSE
                keyUsage = critical, digitalSignature
                extendedKeyUsage = serverAuth

                """.utf8).write(to: URL(fileURLWithPath: extensions))
            try PostgresCluster.run(openssl, ["x509", "-req", "-in", directory + "/server.csr", "-CA", files.caCertificate,
                                              "-CAkey", directory + "/ca.key", "-CAcreateserial", "-out", files.serverCertificate,
                                              "-days", "2", "-extfile", extensions])
            // The server refuses a key others can read.
            guard chmod(files.serverKey, 0o600) == 0 else {
                throw ClusterError(message: "chmod 600 \(files.serverKey) failed: errno \(errno)")
            }
            return files
        }

        static func findOpenSSL() throws -> String {
            let directories = ["/usr/bin", "/usr/local/bin"]
                + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            for directory in directories where FileManager.default.isExecutableFile(atPath: directory + "/openssl") {
                return directory + "/openssl"
            }
            throw ClusterError(message: "openssl is not installed; install Debian's openssl package (.ci/run does)")
        }
    }
}
