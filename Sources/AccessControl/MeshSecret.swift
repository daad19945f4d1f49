import Crypto
import DocumentModel
import Foundation

/// The shared secret of a database's mesh (`"mesh": {"secret": …}`) and the two proofs
/// a mesh link carries (ARCHITECTURE.md §6). The secret never crosses the network.
///
/// - The dialing node sends `X-Shoal-Mesh-Proof: <unix time>.<nonce>.<hex HMAC>`: an
///   HMAC-SHA256 keyed with the secret over its node ID, the database, the time, a
///   fresh nonce and the *channel binding*: the SHA-256 of the TLS certificate the
///   dialer saw (`plain` without TLS). The accepting node checks it against its own
///   certificate, so a proof relayed by a man in the middle (who must present another
///   certificate) fails. Proofs are accepted within `maxSkew` of the receiver's clock,
///   once each (only authentication depends on clocks, never what the mesh converges to).
/// - The accepting node answers with its node ID and `X-Shoal-Mesh-Proof: <hex HMAC>`
///   over its node ID, the database, the dial proof and the same binding: the dialer
///   checks it before any document flows, so a node without the secret can neither
///   join nor pose as a member.
public struct MeshSecret: Sendable {
    /// The header that carries the proofs (request and response).
    public static let header = "X-Shoal-Mesh-Proof"
    /// How far a proof's time may be from the receiver's clock.
    public static let maxSkew: TimeInterval = 300

    private let secret: [UInt8]

    public init(_ secret: String) {
        self.secret = Array(secret.utf8)
    }

    /// The proof `nodeID` sends to join `database`'s mesh over a link whose server
    /// certificate has the SHA-256 `binding` (nil: a plain link).
    public func dialProof(
        nodeID: String, database: String, binding: [UInt8]?, now: Date = Date(), nonce: String = Self.makeNonce()
    ) -> String {
        let time = Int64(now.timeIntervalSince1970)
        return "\(time).\(nonce).\(mac(["dial", nodeID, database, String(time), nonce, Self.text(binding)]))"
    }

    /// Whether `proof` shows that `nodeID` knows the secret and saw `binding`.
    public func verifyDial(_ proof: String?, nodeID: String, database: String, binding: [UInt8]?, now: Date = Date()) -> Bool {
        guard let proof, proof.utf8.count < 300 else { return false }
        let parts = proof.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let time = Int64(parts[0]), !parts[1].isEmpty, parts[1].utf8.count <= 64,
              abs(now.timeIntervalSince1970 - TimeInterval(time)) <= Self.maxSkew
        else { return false }
        let expected = mac(["dial", nodeID, database, String(time), String(parts[1]), Self.text(binding)])
        return PasswordHash.constantTimeEqual(Array(expected.utf8), Array(parts[2].utf8))
    }

    /// How many seconds an authentic dial proof's time is from `now`, when that is more
    /// than `maxSkew` (the proof is refused for it); nil for a proof that is not
    /// authentic or not too old. Lets a refusal say "the clocks differ" rather than
    /// "no secret" when a member's wall clock jumped.
    public func dialSkew(_ proof: String?, nodeID: String, database: String, binding: [UInt8]?, now: Date = Date()) -> TimeInterval? {
        guard let proof, proof.utf8.count < 300 else { return nil }
        let parts = proof.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let time = Int64(parts[0]), !parts[1].isEmpty, parts[1].utf8.count <= 64 else { return nil }
        let skew = TimeInterval(time) - now.timeIntervalSince1970
        guard abs(skew) > Self.maxSkew else { return nil }
        let expected = mac(["dial", nodeID, database, String(time), String(parts[1]), Self.text(binding)])
        return PasswordHash.constantTimeEqual(Array(expected.utf8), Array(parts[2].utf8)) ? skew : nil
    }

    /// The answer of the accepting node `nodeID` to `dialProof`.
    public func acceptProof(dialProof: String, nodeID: String, database: String, binding: [UInt8]?) -> String {
        mac(["accept", nodeID, database, dialProof, Self.text(binding)])
    }

    /// Whether `answer` shows that the accepting node `nodeID` knows the secret.
    public func verifyAccept(_ answer: String?, dialProof: String, nodeID: String, database: String, binding: [UInt8]?) -> Bool {
        guard let answer, answer.utf8.count < 200 else { return false }
        let expected = acceptProof(dialProof: dialProof, nodeID: nodeID, database: database, binding: binding)
        return PasswordHash.constantTimeEqual(Array(expected.utf8), Array(answer.utf8))
    }

    /// 16 random bytes as hex.
    public static func makeNonce() -> String {
        Digests.hex((0..<16).map { _ in UInt8.random(in: 0...255) })
    }

    static func text(_ binding: [UInt8]?) -> String {
        binding.map { Digests.hex($0) } ?? "plain"
    }

    private func mac(_ fields: [String]) -> String {
        let message = Data((["shoal-mesh-2"] + fields).joined(separator: "\n").utf8)
        return Digests.hex(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
    }
}
