import Foundation

/// The secret a database is encrypted with: a raw 256-bit key, or a passphrase from which
/// the key is derived (PBKDF2-HMAC-SHA256 with the database's own random salt, as
/// Couchbase Lite derives a key from a password).
public enum EncryptionKey: Sendable, Equatable, CustomStringConvertible {
    /// 32 bytes.
    case key([UInt8])
    case passphrase(String)

    /// PBKDF2 rounds for a passphrase (fixed by the file format `SHE1`).
    public static let passphraseRounds = 210_000

    /// Reads a key file's content: 32 raw bytes, or 64 hexadecimal digits (surrounding
    /// whitespace ignored).
    public init(keyFileContents data: Data) throws(EncryptionError) {
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.utf8.count == 64, let bytes = Self.hexBytes(text) {
            self = .key(bytes)
        } else if data.count == 32 {
            self = .key([UInt8](data))
        } else {
            throw EncryptionError(.badKey, database: nil,
                reason: "a key file holds 32 random bytes, raw or as 64 hexadecimal digits (this one has \(data.count) bytes)")
        }
    }

    /// Reads a passphrase file's first line (without its line break); empty is refused.
    public init(passphraseFileContents data: Data) throws(EncryptionError) {
        let text = String(decoding: data, as: UTF8.self)
        let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let passphrase = line.hasSuffix("\r") ? String(line.dropLast()) : line
        guard !passphrase.isEmpty else {
            throw EncryptionError(.badKey, database: nil, reason: "the passphrase is empty")
        }
        self = .passphrase(passphrase)
    }

    /// A new random 256-bit key.
    public static func random() -> EncryptionKey {
        var generator = SystemRandomNumberGenerator()
        return .key((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// Never prints the secret.
    public var description: String {
        switch self {
        case .key: "EncryptionKey(key)"
        case .passphrase: "EncryptionKey(passphrase)"
        }
    }

    /// The key as 64 lowercase hexadecimal digits (raw keys only; for writing key files).
    public var hex: String? {
        guard case .key(let bytes) = self else { return nil }
        return bytes.map { String(format: "%02x", $0) }.joined()
    }

    static func hexBytes(_ text: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var high: UInt8?
        for unit in text.utf8 {
            let value: UInt8
            switch unit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = unit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = unit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = unit - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return high == nil ? bytes : nil
    }
}
