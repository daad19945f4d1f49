import BLIP
import Foundation
import NIOSSL

/// TLS for the public listener: the certificate and key it presents, and whether
/// plain connections are still served on the same port.
///
/// - `required` (Sync Gateway's `SSLCert`/`SSLKey`): HTTPS and `wss://` only; a plain
///   HTTP request gets a 400 saying so.
/// - `optional` (the node's own certificate for mesh TLS): the first byte of each
///   connection decides, a TLS handshake or plain HTTP, so clients and development
///   setups keep `http://` while mesh links use `wss://` on the same port.
public struct ListenerTLS: Sendable {
    public enum Mode: Sendable { case required, optional }

    public let mode: Mode
    let context: NIOSSLContext
    /// SHA-256 of the certificate's DER bytes: the channel binding of mesh proofs.
    public let certificateDigest: [UInt8]

    /// Loads a PEM certificate chain (leaf first) and its PEM private key.
    public init(certificatePath: String, keyPath: String, mode: Mode) throws {
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw ListenerTLSError("cannot load the certificate \(certificatePath): \(error)")
        }
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw ListenerTLSError("cannot load the private key \(keyPath): \(error)")
        }
        guard let leaf = chain.first else { throw ListenerTLSError("no certificate in \(certificatePath)") }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw ListenerTLSError("the certificate \(certificatePath) and key \(keyPath) do not make a TLS context: \(error)")
        }
        certificateDigest = BLIPClientTLS.digest(ofCertificateDER: try leaf.toDERBytes())
        self.mode = mode
    }
}

/// A certificate or key that cannot be used, with the reason.
public struct ListenerTLSError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
