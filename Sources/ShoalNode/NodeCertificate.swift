import Crypto
import Foundation
import SwiftASN1
import X509

/// This node's own TLS certificate for mesh links: a self-signed P-256 certificate
/// named after the node ID, made on the first start that needs it and kept in
/// `<data>/tls/` (`node-cert.pem`, `node-key.pem`, the key readable by its owner only).
/// Nobody trusts it by its chain: mesh peers authenticate each other with the mesh
/// secret's proofs, which are bound to this certificate's digest.
enum NodeCertificate {
    struct Paths: Equatable {
        let certificate: String
        let key: String
    }

    static func paths(dataDirectory: String) -> Paths {
        let directory = (dataDirectory as NSString).appendingPathComponent("tls")
        return Paths(
            certificate: (directory as NSString).appendingPathComponent("node-cert.pem"),
            key: (directory as NSString).appendingPathComponent("node-key.pem"))
    }

    /// The certificate's paths, creating the pair if either file is missing.
    static func loadOrCreate(dataDirectory: String, nodeID: String, now: Date = Date()) throws -> Paths {
        let paths = paths(dataDirectory: dataDirectory)
        let files = FileManager.default
        if files.fileExists(atPath: paths.certificate) && files.fileExists(atPath: paths.key) { return paths }
        try files.createDirectory(
            atPath: (paths.certificate as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let (certificatePEM, keyPEM) = try make(nodeID: nodeID, now: now)
        // The key first, with its permissions set before the certificate says the pair exists.
        try write(keyPEM, to: paths.key, permissions: 0o600)
        try write(certificatePEM, to: paths.certificate, permissions: 0o644)
        return paths
    }

    /// A fresh key and its self-signed certificate, both PEM.
    static func make(nodeID: String, now: Date) throws -> (certificate: String, key: String) {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            OrganizationName("Shoal mesh")
            CommonName("shoal-node-\(nodeID)")
        }
        let serial = Certificate.SerialNumber(bytes: (0..<16).map { _ in UInt8.random(in: 0...255) })
        let certificate = try Certificate(
            version: .v3, serialNumber: serial, publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-86_400), notValidAfter: now.addingTimeInterval(20 * 365 * 86_400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                KeyUsage(digitalSignature: true)
                try ExtendedKeyUsage([.serverAuth, .clientAuth])
            },
            issuerPrivateKey: .init(key))
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }

    private static func write(_ text: String, to path: String, permissions: mode_t) throws {
        try DurableFile.replace(path, with: Array(text.utf8), permissions: permissions)
    }
}
