import Foundation
import NIOSSL
import PostgresNIO

extension PostgresURL {
    /// How a connection is encrypted and what of the server's certificate is verified: libpq's
    /// `sslmode`, through postgres-nio's TLS modes.
    ///
    /// ```swift
    /// let url = try PostgresURL("postgres://replica@db.internal/cache?sslmode=verify-full&sslrootcert=ca.pem")
    /// url.sslMode   // .verifyFull
    /// ```
    ///
    /// | mode | encrypted | certificate chain verified | host name verified |
    /// |---|---|---|---|
    /// | `disable` | never | – | – |
    /// | `allow`, `prefer` (the default) | when the server offers TLS | with `sslrootcert` only | no |
    /// | `require` | always, or the connection fails | with `sslrootcert` only (then as `verify-ca`) | no |
    /// | `verify-ca` | always | yes, against `sslrootcert` | no |
    /// | `verify-full` | always | yes, against `sslrootcert` | yes |
    ///
    /// `allow` is `prefer`: postgres-nio cannot retry a refused plain connection with TLS, so it
    /// asks for TLS first and goes on unencrypted when the server has none (never weaker than
    /// libpq's `allow`). Under `allow` and `prefer` a TLS handshake that fails (a certificate
    /// not trusted by `sslrootcert`) fails the connection; there is no fallback to plain text.
    public enum SSLMode: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// No TLS.
        case disable
        /// As ``prefer``.
        case allow
        /// TLS when the server offers it, plain text otherwise (libpq's default).
        case prefer
        /// TLS or no connection; the certificate is verified only when `sslrootcert` is given.
        case require
        /// TLS, and the server's certificate chains to a CA of `sslrootcert`.
        case verifyCA = "verify-ca"
        /// TLS, the certificate chains to a CA of `sslrootcert` and names the URL's host.
        case verifyFull = "verify-full"

        public var description: String { rawValue }
    }

    /// The mode in force: ``sslMode``, or when the URL names none ``SSLMode/prefer``
    /// (``SSLMode/verifyFull`` with `sslrootcert=system`, as libpq 16 does).
    ///
    /// ```swift
    /// try PostgresURL("postgres://replica@127.0.0.1/cache").effectiveSSLMode   // .prefer
    /// ```
    public var effectiveSSLMode: SSLMode {
        if let sslMode { return sslMode }
        return sslRootCert == Self.systemRootCert ? .verifyFull : .prefer
    }

    /// `sslrootcert=system`: the system's trust store.
    static let systemRootCert = "system"

    /// Refuses combinations libpq refuses: `verify-ca`/`verify-full` with no CA to verify
    /// against, `sslrootcert=system` with a mode weaker than `verify-full`.
    ///
    /// - Throws: ``PostgresStoreError`` `.invalidURL`.
    func checkTLSSettings(url: String) throws {
        let mode = effectiveSSLMode
        if sslRootCert == nil && (mode == .verifyCA || mode == .verifyFull) {
            throw PostgresStoreError(.invalidURL, "sslmode=\(mode) needs sslrootcert=FILE (a PEM file of the CA certificates "
                                     + "to trust) or sslrootcert=system", url: url)
        }
        if sslRootCert == Self.systemRootCert && mode != .verifyFull {
            throw PostgresStoreError(.invalidURL, "sslmode=\(mode) may not be used with sslrootcert=system "
                                     + "(use sslmode=verify-full)", url: url)
        }
    }

    /// postgres-nio's TLS mode for this URL: `.disable`, `.prefer` (`allow`, `prefer`) or
    /// `.require`, with a context that verifies what ``effectiveSSLMode`` says.
    ///
    /// - Throws: ``PostgresStoreError`` `.invalidURL` for a mode that needs a CA but names
    ///   none, or an `sslrootcert` file that cannot be read or holds no PEM certificate.
    package func connectionTLS() throws -> PostgresConnection.Configuration.TLS {
        try checkTLSSettings(url: description)
        let mode = effectiveSSLMode
        if mode == .disable { return .disable }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        switch sslRootCert {
        case nil:
            configuration.certificateVerification = .none
        case .some(Self.systemRootCert):
            configuration.trustRoots = .default
            configuration.certificateVerification = .fullVerification
        case let path?:
            configuration.trustRoots = .certificates(try Self.rootCertificates(path, url: description))
            configuration.certificateVerification = mode == .verifyFull ? .fullVerification : .noHostnameVerification
        }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw PostgresStoreError(.invalidURL, "cannot set up TLS (sslmode=\(mode)): \(error)", url: description)
        }
        switch mode {
        case .allow, .prefer: return .prefer(context)
        case .disable, .require, .verifyCA, .verifyFull: return .require(context)
        }
    }

    /// The certificates of the PEM file at `path`.
    ///
    /// - Throws: ``PostgresStoreError`` `.invalidURL` naming `sslrootcert` and the file.
    static func rootCertificates(_ path: String, url: String) throws -> [NIOSSLCertificate] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw PostgresStoreError(.invalidURL, "sslrootcert: no file at '\(path)'", url: url)
        }
        guard !isDirectory.boolValue, let data = FileManager.default.contents(atPath: path) else {
            throw PostgresStoreError(.invalidURL, "sslrootcert: cannot read '\(path)'", url: url)
        }
        let certificates = try? NIOSSLCertificate.fromPEMBytes(Array(data))
        guard let certificates, !certificates.isEmpty else {
            throw PostgresStoreError(.invalidURL, "sslrootcert: '\(path)' holds no PEM certificate "
                                     + "(expected -----BEGIN CERTIFICATE-----)", url: url)
        }
        return certificates
    }
}
