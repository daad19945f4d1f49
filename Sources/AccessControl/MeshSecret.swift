import Crypto
import Foundation

/// The shared secret of a database's mesh (`"mesh": {"secret": …}`) and the proof a
/// node sends when it opens a mesh link: `X-Shoal-Mesh-Proof: <unix time>.<hex HMAC>`,
/// an HMAC-SHA256 keyed with the secret over the node ID, the database and the time.
/// The secret itself never crosses the network; a proof is accepted within
/// `maxSkew` of the receiver's clock (only authentication depends on clocks, never
/// what the mesh converges to).
public struct MeshSecret: Sendable {
    /// The header that carries the proof.
    public static let header = "X-Shoal-Mesh-Proof"
    /// How far a proof's time may be from the receiver's clock.
    public static let maxSkew: TimeInterval = 300

    private let secret: [UInt8]

    public init(_ secret: String) {
        self.secret = Array(secret.utf8)
    }

    /// The proof `nodeID` sends to join `database`'s mesh at `now`.
    public func proof(nodeID: String, database: String, now: Date = Date()) -> String {
        let time = Int64(now.timeIntervalSince1970)
        return "\(time).\(mac(nodeID: nodeID, database: database, time: time))"
    }

    /// Whether `proof` shows that `nodeID` knows the secret.
    public func verify(_ proof: String?, nodeID: String, database: String, now: Date = Date()) -> Bool {
        guard let proof, proof.utf8.count < 200 else { return false }
        let parts = proof.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, let time = Int64(parts[0]),
              abs(now.timeIntervalSince1970 - TimeInterval(time)) <= Self.maxSkew
        else { return false }
        let expected = Array(mac(nodeID: nodeID, database: database, time: time).utf8)
        return PasswordHash.constantTimeEqual(expected, Array(parts[1].utf8))
    }

    private func mac(nodeID: String, database: String, time: Int64) -> String {
        let message = Data("shoal-mesh\n\(nodeID)\n\(database)\n\(time)".utf8)
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: secret))
        return code.map { String(format: "%02x", $0) }.joined()
    }
}
