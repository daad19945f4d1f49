import DocumentModel
import DocumentStore
import Foundation

/// Where a database's encryption key comes from: a key file, a passphrase file, or a
/// passphrase in an environment variable. The key itself is never in the config file.
public enum EncryptionSource: Sendable, Equatable {
    /// 32 random bytes, raw or as 64 hex digits.
    case keyFile(String)
    /// A passphrase (first line of the file); the key is derived with PBKDF2 and the
    /// database's own salt.
    case passphraseFile(String)
    /// A passphrase in this environment variable.
    case passphraseEnvironment(String)

    /// The environment variable `shoal serve` takes a passphrase from.
    public static let environmentVariable = "SHOAL_ENCRYPTION_PASSPHRASE"

    /// Reads a config's `"encryption"` object: exactly one of `key_file`,
    /// `passphrase_file`, `passphrase_env`.
    public static func parse(_ value: JSON, context: String) throws -> EncryptionSource {
        let fail = { (reason: String) in ConfigLoader.ConfigError(message: "\(context): \"encryption\" \(reason)") }
        guard let object = value.objectValue else { throw fail("must be an object") }
        if object["key"] != nil || object["passphrase"] != nil {
            throw fail("never holds a key or passphrase itself: name a \"key_file\", \"passphrase_file\" or \"passphrase_env\"")
        }
        let known = ["key_file", "passphrase_file", "passphrase_env"]
        let given = known.filter { object[$0] != nil }
        guard given.count == 1, object.count == 1 else {
            throw fail("takes exactly one of \"key_file\", \"passphrase_file\" or \"passphrase_env\"")
        }
        guard let text = object[given[0]]?.stringValue, !text.isEmpty else { throw fail("\"\(given[0])\" must be a non-empty string") }
        switch given[0] {
        case "key_file": return .keyFile(text)
        case "passphrase_file": return .passphraseFile(text)
        default: return .passphraseEnvironment(text)
        }
    }

    /// Reads the key or passphrase.
    public func load(environment: [String: String] = ProcessInfo.processInfo.environment) throws(EncryptionError) -> EncryptionKey {
        switch self {
        case .keyFile(let path):
            return try EncryptionKey(keyFileContents: try Self.read(path, what: "key file"))
        case .passphraseFile(let path):
            return try EncryptionKey(passphraseFileContents: try Self.read(path, what: "passphrase file"))
        case .passphraseEnvironment(let name):
            guard let value = environment[name], !value.isEmpty else {
                throw EncryptionError(.badKey, database: nil, reason: "the environment variable \(name) holds no passphrase")
            }
            return .passphrase(value)
        }
    }

    private static func read(_ path: String, what: String) throws(EncryptionError) -> Data {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw EncryptionError(.badKey, database: nil, reason: "cannot read the \(what) \(path)")
        }
        return data
    }
}
