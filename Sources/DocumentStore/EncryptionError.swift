/// Why an encrypted (or unencrypted) database could not be opened or rekeyed, naming the
/// database and what to do. Nothing in the database was changed when this is thrown.
public struct EncryptionError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// The key does not open this database.
        case wrongKey = "wrong_key"
        /// The database is encrypted and no key was given.
        case keyRequired = "key_required"
        /// A key was given for a database that is not encrypted.
        case notEncrypted = "not_encrypted"
        /// The file is shorter than a page, or not a whole number of pages.
        case truncated
        /// The key is right but the file fails authentication, or it is not a database.
        case corrupted
        /// A key file or passphrase is malformed.
        case badKey = "bad_key"
        /// The cipher or the files around it failed.
        case failed
    }

    public let kind: Kind
    /// The database concerned (nil before one is known, e.g. reading a key file).
    public let database: String?
    public let reason: String

    public init(_ kind: Kind, database: String?, reason: String) {
        self.kind = kind
        self.database = database
        self.reason = reason
    }

    /// The same error, now naming `database`.
    public func naming(_ database: String) -> EncryptionError {
        EncryptionError(kind, database: self.database ?? database, reason: reason)
    }

    public var description: String {
        switch kind {
        case .wrongKey: "wrong encryption key for database \(database ?? "?")\(reason.isEmpty ? "" : ": \(reason)")"
        default: database.map { "database \($0): \(reason)" } ?? reason
        }
    }

    /// The exit status of `shoal` when it stops on this error (EX_USAGE).
    public static let exitStatus: Int32 = 64
}
