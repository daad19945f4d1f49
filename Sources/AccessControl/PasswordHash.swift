import Crypto
import Foundation
import _CryptoExtras

/// A stored password: PBKDF2-HMAC-SHA256 with a random salt, never the password itself.
///
/// `PasswordHash` owns the password format of Shoal's principals (ARCHITECTURE.md §6):
/// `pbkdf2-sha256$<iterations>$<base64 salt>$<base64 derived key>`, with a random 16-byte
/// salt and a 32-byte key. The iteration count travels with the hash, so raising the
/// default later keeps old hashes verifiable. Verification compares in constant time.
/// The key derivation is swift-crypto's `_CryptoExtras` PBKDF2 (BoringSSL).
///
/// Deriving costs `iterations` HMAC-SHA256 pairs (≈ tens of ms at the default): callers
/// that authenticate every HTTP request should cache successful verifications or use
/// sessions rather than hash on each request.
public struct PasswordHash: Sendable, Hashable, CustomStringConvertible {
    /// The default iteration count for new hashes.
    public static let defaultIterations = 100_000
    /// The smallest and largest counts accepted when parsing a stored hash.
    public static let iterationRange = 1...10_000_000
    /// The format tag at the start of every encoded hash.
    public static let scheme = "pbkdf2-sha256"

    /// PBKDF2 rounds.
    public let iterations: Int
    /// The random salt (16 bytes for new hashes).
    public let salt: [UInt8]
    /// The derived key (32 bytes).
    public let derivedKey: [UInt8]

    /// Hashes `password` with a fresh random salt.
    public init(password: String, iterations: Int = PasswordHash.defaultIterations) {
        precondition(Self.iterationRange.contains(iterations), "PBKDF2 iterations out of range")
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        self.init(password: password, salt: salt, iterations: iterations)
    }

    /// Hashes `password` with the given salt (tests and re-derivation).
    public init(password: String, salt: [UInt8], iterations: Int) {
        self.iterations = iterations
        self.salt = salt
        self.derivedKey = Self.pbkdf2SHA256(password: Array(password.utf8), salt: salt, iterations: iterations, length: 32)
    }

    /// Parses the stored form; nil if it is not a well-formed `pbkdf2-sha256$…` string.
    public init?(encoded: String) {
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == Self.scheme,
              let iterations = Int(parts[1]), Self.iterationRange.contains(iterations),
              let salt = Data(base64Encoded: String(parts[2])), !salt.isEmpty,
              let key = Data(base64Encoded: String(parts[3])), key.count >= 16, key.count <= 64
        else { return nil }
        self.iterations = iterations
        self.salt = Array(salt)
        self.derivedKey = Array(key)
    }

    /// The stored form: `pbkdf2-sha256$<iterations>$<base64 salt>$<base64 key>`.
    public var encoded: String {
        "\(Self.scheme)$\(iterations)$\(Data(salt).base64EncodedString())$\(Data(derivedKey).base64EncodedString())"
    }

    /// Never shows the hash: safe in logs.
    public var description: String { "PasswordHash(\(Self.scheme), \(iterations) iterations)" }

    /// Whether `password` is the one this hash was made from. Constant time in the key bytes.
    public func verify(_ password: String) -> Bool {
        let candidate = Self.pbkdf2SHA256(password: Array(password.utf8), salt: salt, iterations: iterations, length: derivedKey.count)
        return Self.constantTimeEqual(candidate, derivedKey)
    }

    /// PBKDF2-HMAC-SHA256 (RFC 8018) of `password` and `salt`, `length` bytes.
    public static func pbkdf2SHA256(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8] {
        do {
            let key = try KDF.Insecure.PBKDF2.deriveKey(
                from: password, salt: salt, using: .sha256,
                outputByteCount: length, unsafeUncheckedRounds: iterations)
            return key.withUnsafeBytes { Array($0) }
        } catch {
            // Only invalid parameters (non-positive length or rounds) reach here.
            preconditionFailure("PBKDF2 failed: \(error)")
        }
    }

    /// Compares two byte strings without an early exit on the first difference.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
