import NIOSSL
import PostgresNIO

extension PostgresStoreError {
    /// A TLS failure of postgres-nio in the user's terms: which `sslmode` asked for what, and what
    /// failed (no TLS on the server, a certificate not trusted, a host name not in the
    /// certificate); `nil` for any other error.
    ///
    /// ```swift
    /// // postgres://app@127.0.0.1:5432/cache?sslmode=require: the server does not support TLS (sslmode=require)
    /// ```
    static func tlsFailure(_ error: PSQLError, url: PostgresURL, prefix: String) -> PostgresStoreError? {
        let mode = "sslmode=\(url.effectiveSSLMode)"
        func failure(_ message: String) -> PostgresStoreError {
            PostgresStoreError(.tlsFailed, prefix + message, url: url.description)
        }
        if error.code == .sslUnsupported {
            return failure("the server does not support TLS (\(mode))")
        }
        guard error.code == .connectionError || error.code == .failedToAddSSLHandler, let underlying = error.underlying
        else { return nil }
        if let extra = underlying as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return failure("certificate verify failed: the server's certificate does not name the host '\(url.host)' (\(mode))")
        }
        guard let ssl = underlying as? NIOSSLError else { return nil }
        switch ssl {
        case .handshakeFailed(let boringSSL) where "\(boringSSL)".contains("CERTIFICATE_VERIFY_FAILED"):
            let roots = url.sslRootCert == PostgresURL.systemRootCert ? "the system's trust store (sslrootcert=system)"
                : "sslrootcert=\(url.sslRootCert ?? "")"
            return failure("certificate verify failed: the server's certificate does not chain to a CA of \(roots), "
                           + "or is expired or not yet valid (\(mode))")
        case .handshakeFailed(let boringSSL):
            return failure("TLS handshake failed (\(mode)): \(boringSSL)")
        default:
            return failure("TLS failed (\(mode)): \(ssl)")
        }
    }
}
