import Crypto
import Foundation
import NIOCore
import NIOSSL

/// How a `wss://` dial checks the server's certificate.
///
/// - `standard`: the chain must lead to the system's trust roots and name the host
///   (what any TLS client does; for Sync Gateway or a node with a CA-signed `SSLCert`).
/// - `pinned(der)`: the server's certificate must be exactly this one (DER bytes), as
///   Couchbase Lite's `pinnedServerCertificate`: for self-signed certificates.
/// - `boundByApplication`: no chain check here; the handshake's certificate digest is
///   handed to the upgrade hook, which authenticates the peer itself (the mesh binds
///   its shared-secret proofs to it, ARCHITECTURE.md §6).
public enum BLIPClientTLS: Sendable, Equatable {
    case standard
    case pinned([UInt8])
    case boundByApplication

    /// The SHA-256 digest of a certificate's DER bytes: what the mesh proofs bind to
    /// (on both sides: the dialer for what it was shown, the listener for its own).
    public static func digest(ofCertificateDER der: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: der))
    }

    /// The DER bytes of the first certificate in PEM text, or in the PEM file at that path.
    public static func certificateDER(pemOrPath text: String) throws -> [UInt8] {
        let pem: String
        if text.contains("-----BEGIN") {
            pem = text
        } else {
            guard let contents = FileManager.default.contents(atPath: text) else {
                throw BLIPError(code: 400, message: "cannot read the certificate file \(text)")
            }
            pem = String(decoding: contents, as: UTF8.self)
        }
        do {
            return try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem).toDERBytes()
        } catch {
            throw BLIPError(code: 400, message: "not a PEM certificate (\(error))")
        }
    }

    /// The client context for this mode (built once per mode: loading trust roots is slow).
    func sslContext() throws -> NIOSSLContext {
        switch self {
        case .standard: return try Self.contexts.standard.get()
        case .pinned, .boundByApplication: return try Self.contexts.unverified.get()
        }
    }

    /// Checks the certificate the server presented (after the handshake).
    func accept(peerDER: [UInt8]?) throws {
        guard case .pinned(let expected) = self else { return }
        guard let peerDER, peerDER == expected else {
            throw BLIPError(code: 495, message: "the server's TLS certificate is not the pinned certificate")
        }
    }

    private struct Contexts: Sendable {
        let standard: Result<NIOSSLContext, any Error>
        let unverified: Result<NIOSSLContext, any Error>
    }

    private static let contexts: Contexts = {
        var unverified = TLSConfiguration.makeClientConfiguration()
        unverified.certificateVerification = .none
        return Contexts(
            standard: Result { try NIOSSLContext(configuration: .makeClientConfiguration()) },
            unverified: Result { try NIOSSLContext(configuration: unverified) })
    }()
}

/// What the application adds to one WebSocket upgrade: request headers made once the
/// connection (and its TLS handshake) is up, so they can depend on the server's
/// certificate, and a check of the server's answer before any BLIP message flows.
/// One instance per dial.
public protocol BLIPUpgradeHook: Sendable {
    /// Headers to add to the upgrade request. `peerCertificateDigest` is the SHA-256
    /// of the server certificate's DER bytes over `wss://`, nil over `ws://`.
    func requestHeaders(peerCertificateDigest: [UInt8]?) -> [(String, String)]
    /// Throws to refuse the connection after a successful upgrade (e.g. the server
    /// did not prove the mesh secret).
    func checkResponse(headers: [(String, String)], peerCertificateDigest: [UInt8]?) throws
}

/// The server answered the WebSocket upgrade with an HTTP status instead of 101.
public struct BLIPUpgradeRefused: Error, Sendable, CustomStringConvertible {
    public let status: Int
    /// The start of the response body (Sync Gateway / Shoal send a JSON reason).
    public let body: String

    public var description: String { "HTTP \(status): \(body)" }
}
