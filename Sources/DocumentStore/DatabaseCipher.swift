import CSQLiteCrypt
import Crypto
import _CryptoExtras
import Foundation

/// Turns an `EncryptionKey` into the 256-bit key of one database file and installs it in
/// the encrypting VFS (`CSQLiteCrypt`), after checking, without SQLite, that the file is
/// what the caller expects: plain, encrypted with this key, new, truncated or corrupt.
struct DatabaseCipher: Sendable {
    /// The database key (32 bytes) and the salt stored in every page.
    let key: [UInt8]
    let salt: [UInt8]

    /// What page 1 of a file says.
    enum FileState: Equatable {
        case missing, plain, encrypted(salt: [UInt8]), truncated, unknown, unreadable
    }

    static func state(of path: String) -> FileState {
        var salt = [UInt8](repeating: 0, count: Int(SHOAL_CRYPT_SALT))
        let result = shoal_crypt_probe(path, nil, &salt)
        switch result {
        case SHOAL_PROBE_MISSING.rawValue: return .missing
        case SHOAL_PROBE_PLAIN.rawValue: return .plain
        case SHOAL_PROBE_NEEDS_KEY.rawValue: return .encrypted(salt: salt)
        case SHOAL_PROBE_TRUNCATED.rawValue: return .truncated
        case SHOAL_PROBE_UNKNOWN.rawValue: return .unknown
        default: return .unreadable
        }
    }

    /// The cipher for `path` with `secret`: derived with the file's salt when it exists,
    /// with a new random salt when it does not. Throws when the file is plain, another
    /// key's, truncated or corrupt; the file is only read.
    static func open(path: String, secret: EncryptionKey, database: String) throws(EncryptionError) -> DatabaseCipher {
        let salt: [UInt8]
        switch state(of: path) {
        case .missing: salt = randomBytes(Int(SHOAL_CRYPT_SALT))
        case .plain:
            throw EncryptionError(.notEncrypted, database: database,
                reason: "it is not encrypted; open it without a key, or encrypt it with `shoal rekey --new-key-file …`")
        case .encrypted(let stored): salt = stored
        case .truncated: throw truncated(database, path)
        case .unknown: throw notADatabase(database, path)
        case .unreadable: throw EncryptionError(.failed, database: database, reason: "cannot read \(path)")
        }
        let cipher = DatabaseCipher(key: try derive(secret, salt: salt), salt: salt)
        if case .missing = state(of: path) { return cipher }
        switch shoal_crypt_probe(path, cipher.key, nil) {
        case SHOAL_PROBE_OK.rawValue: return cipher
        case SHOAL_PROBE_WRONG_KEY.rawValue:
            throw EncryptionError(.wrongKey, database: database, reason: "")
        case SHOAL_PROBE_TRUNCATED.rawValue: throw truncated(database, path)
        case SHOAL_PROBE_CORRUPT.rawValue:
            throw EncryptionError(.corrupted, database: database,
                reason: "\(path) is corrupted: the key is right but its first page fails authentication")
        default: throw notADatabase(database, path)
        }
    }

    /// A new cipher (fresh salt) for writing a file with `secret`.
    static func fresh(_ secret: EncryptionKey) throws(EncryptionError) -> DatabaseCipher {
        let salt = randomBytes(Int(SHOAL_CRYPT_SALT))
        return DatabaseCipher(key: try derive(secret, salt: salt), salt: salt)
    }

    /// Checks that a file opened without a key is not an encrypted one.
    static func checkPlain(path: String, database: String) throws(EncryptionError) {
        switch state(of: path) {
        case .missing, .plain: return
        case .encrypted:
            throw EncryptionError(.keyRequired, database: database,
                reason: "it is encrypted; give its key (`encryption` in the config, --encryption-key-file or --encryption-passphrase-file)")
        case .truncated: throw truncated(database, path)
        case .unknown: throw notADatabase(database, path)
        case .unreadable: throw EncryptionError(.failed, database: database, reason: "cannot read \(path)")
        }
    }

    /// Installs the key for `path` in the VFS: SQLite reads and writes it encrypted from now on.
    func install(path: String) throws(EncryptionError) {
        let result = shoal_crypt_set_key(path, key, salt)
        guard result == 0 else {
            throw EncryptionError(.failed, database: nil, reason: "cannot install the encrypting VFS (SQLite error \(result))")
        }
    }

    static func uninstall(path: String) {
        shoal_crypt_remove_key(path)
    }

    static func derive(_ secret: EncryptionKey, salt: [UInt8]) throws(EncryptionError) -> [UInt8] {
        switch secret {
        case .key(let bytes):
            guard bytes.count == 32 else {
                throw EncryptionError(.badKey, database: nil, reason: "an encryption key is 32 bytes, not \(bytes.count)")
            }
            return bytes
        case .passphrase(let text):
            do {
                let key = try KDF.Insecure.PBKDF2.deriveKey(
                    from: Array(text.utf8), salt: salt, using: .sha256, outputByteCount: 32,
                    rounds: EncryptionKey.passphraseRounds)
                return key.withUnsafeBytes { [UInt8]($0) }
            } catch {
                throw EncryptionError(.failed, database: nil, reason: "key derivation failed: \(error)")
            }
        }
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        precondition(shoal_crypt_random(&bytes, Int32(count)) == 0, "no random bytes")
        return bytes
    }

    private static func truncated(_ database: String, _ path: String) -> EncryptionError {
        EncryptionError(.truncated, database: database, reason: "\(path) is truncated (not a whole number of pages)")
    }

    private static func notADatabase(_ database: String, _ path: String) -> EncryptionError {
        EncryptionError(.corrupted, database: database, reason: "\(path) is neither a SQLite database nor an encrypted Shoal database")
    }
}
