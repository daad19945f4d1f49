import DocumentModel
import Foundation

/// How one database is stored: where its files live, how long histories grow,
/// how large a document may be and how hard a commit is pushed to disk.
public struct StoreConfiguration: Sendable, Equatable {
    /// Where the database lives.
    public enum Location: Sendable, Equatable {
        /// `<directory>/<name>.sqlite3` plus `<directory>/<name>.attachments/`.
        case directory(String)
        /// In memory only (Sync Gateway's `"server": "walrus:"`); attachments go to a
        /// temporary directory that is removed when the store closes.
        case memory
    }

    /// How a commit reaches the disk.
    public enum Durability: String, Sendable, Equatable {
        /// `synchronous=FULL`: a write that returned survives a power cut.
        case full
        /// `synchronous=NORMAL`: a write that returned survives a crash of the process
        /// (SIGKILL); the last commits may be lost on a power cut.
        case normal

        /// SQLite's `PRAGMA synchronous` value for this durability.
        public var synchronousPragma: String {
            switch self {
            case .full: "FULL"
            case .normal: "NORMAL"
            }
        }
    }

    public var name: String
    public var location: Location
    /// Maximum generations kept per branch (`revs_limit`).
    public var revsLimit: Int
    /// Largest accepted JSON document body, in bytes.
    public var maxDocumentSize: Int
    public var durability: Durability
    /// The key the database file and its attachments are encrypted with (nil: plain).
    public var encryption: EncryptionKey?
    /// The source ID of the versions this database mints, used once, when a database
    /// without one is opened (nil: 16 random bytes). Kept in the database after that.
    public var versionSource: SourceID?

    public init(
        name: String,
        location: Location,
        revsLimit: Int = 1000,
        maxDocumentSize: Int = 20 * 1024 * 1024,
        durability: Durability = .full,
        encryption: EncryptionKey? = nil,
        versionSource: SourceID? = nil
    ) {
        self.encryption = encryption
        self.versionSource = versionSource
        self.name = name
        self.location = location
        self.revsLimit = revsLimit
        self.maxDocumentSize = maxDocumentSize
        self.durability = durability
    }

    /// The SQLite file path, or nil in memory.
    var databasePath: String? {
        guard case .directory(let dir) = location else { return nil }
        return (dir as NSString).appendingPathComponent("\(name).sqlite3")
    }

    /// The attachment directory for a file-backed store.
    var attachmentDirectory: String? {
        guard case .directory(let dir) = location else { return nil }
        return (dir as NSString).appendingPathComponent("\(name).attachments")
    }
}
