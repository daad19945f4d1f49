import Blocking
import DocumentModel
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Content-addressed attachment blobs: one file per `sha1-<base64>` digest in a
/// directory beside the database, written to a temporary file and renamed so a
/// blob is either whole or absent.
///
/// With an attachment key (an encrypted database) new blobs are written encrypted as
/// `<hex>.enc` (`BlobCipher`); a plain `<hex>` and an encrypted `<hex>.enc` are both
/// read, whatever the database is now, so converting blobs one by one is crash-safe.
///
/// File work that may block (writing and fsyncing a blob, reading one whole) is
/// `async` and runs on `BlockingPool.shared`, never on a cooperative thread; the
/// synchronous forms (`…Here`) are for code that already runs on a blocking thread.
public final class BlobStore: Sendable {
    public let directory: String
    private let removeOnClose: Bool
    private let syncToDisk: Bool
    private let cipherBox = Mutex<BlobCipher?>(nil)
    static let encryptedSuffix = ".enc"

    /// The attachment cipher new blobs are written with (nil: plain).
    var cipher: BlobCipher? {
        get { cipherBox.withLock { $0 } }
        set { cipherBox.withLock { $0 = newValue } }
    }

    /// Whether the directory (and its `tmp`) exists yet.
    private let created = Mutex(false)

    /// A database's blobs in `directory`, created now; an in-memory database's (nil) in a
    /// temporary directory created with its first blob (most never have one, and a process
    /// killed before `close` would leave an empty directory behind) and removed on close.
    init(directory: String?, syncToDisk: Bool) throws {
        if let directory {
            self.directory = directory
            removeOnClose = false
        } else {
            self.directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("shoal-blobs-\(UUID().uuidString)").path
            removeOnClose = true
        }
        self.syncToDisk = syncToDisk
        if directory != nil { try createDirectory() }
    }

    /// Creates the directory and its `tmp` unless done already.
    fileprivate func createDirectory() throws {
        try created.withLock { created in
            guard !created else { return }
            try FileManager.default.createDirectory(
                atPath: (directory as NSString).appendingPathComponent("tmp"), withIntermediateDirectories: true)
            created = true
        }
    }

    func close() {
        if removeOnClose { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// The file that holds a blob now (encrypted or plain), nil when it is not stored.
    func existingFile(for digest: String) -> (path: String, encrypted: Bool)? {
        guard let name = Self.fileName(for: digest) else { return nil }
        let plain = (directory as NSString).appendingPathComponent(name)
        if FileManager.default.fileExists(atPath: plain + Self.encryptedSuffix) { return (plain + Self.encryptedSuffix, true) }
        if FileManager.default.fileExists(atPath: plain) { return (plain, false) }
        return nil
    }

    /// True when the blob is stored.
    public func contains(_ digest: String) -> Bool {
        existingFile(for: digest) != nil
    }

    /// A reader of the blob's content (decrypted), nil when it is not stored or cannot
    /// be opened.
    public func openReader(_ digest: String) -> BlobReader? {
        guard let file = existingFile(for: digest) else { return nil }
        return try? BlobReader(path: file.path, cipher: cipher, encrypted: file.encrypted)
    }

    /// The blob's length in bytes (of its plaintext), nil when it is not stored.
    public func length(of digest: String) -> Int? {
        guard let file = existingFile(for: digest),
              let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size]) as? Int
        else { return nil }
        return file.encrypted ? BlobCipher.plaintextLength(fileSize: size) : size
    }

    /// The blob's whole content (for inline `attachments=true` and small reads), read on
    /// the blocking pool.
    public func read(_ digest: String) async -> [UInt8]? {
        await BlockingPool.shared.perform { self.readHere(digest) }
    }

    /// `read` on the calling thread: only where blocking is allowed (a blocking-pool
    /// thread, a transaction's queue).
    public func readHere(_ digest: String) -> [UInt8]? {
        try? openReader(digest)?.readAll()
    }

    /// Stores bytes held in memory (inline base64 attachments, fetched attachments):
    /// written, fsynced and renamed on the blocking pool.
    public func store(_ bytes: [UInt8], expecting digest: String? = nil) async throws -> (digest: String, length: Int) {
        try await BlockingPool.shared.perform { () throws -> (digest: String, length: Int) in
            try self.storeHere(bytes, expecting: digest)
        }
    }

    /// `store` on the calling thread (a thread that may block).
    func storeHere(_ bytes: [UInt8], expecting digest: String? = nil) throws -> (digest: String, length: Int) {
        let writer = try makeWriter()
        try writer.write(bytes)
        return try writer.finish(expecting: digest)
    }

    /// Starts a streamed write; feed it chunks, then `finish()` it.
    public func makeWriter() throws -> BlobWriter {
        try BlobWriter(store: self)
    }

    /// Every stored blob's digest (once, whether plain, encrypted or both).
    func allDigests() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return Array(Set(names.compactMap { name in
            Self.digest(forFileName: name.hasSuffix(Self.encryptedSuffix) ? String(name.dropLast(Self.encryptedSuffix.count)) : name)
        }))
    }

    /// Names of the blob files stored plain (`encrypted: false`) or encrypted.
    func digests(encrypted: Bool) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { name in
            guard name.hasSuffix(Self.encryptedSuffix) == encrypted else { return nil }
            return Self.digest(forFileName: encrypted ? String(name.dropLast(Self.encryptedSuffix.count)) : name)
        }
    }

    func remove(_ digest: String) {
        guard let name = Self.fileName(for: digest) else { return }
        let plain = (directory as NSString).appendingPathComponent(name)
        try? FileManager.default.removeItem(atPath: plain)
        try? FileManager.default.removeItem(atPath: plain + Self.encryptedSuffix)
    }

    /// Rewrites a stored blob in the form the store writes now (encrypted with the
    /// current cipher, or plain without one), then removes the other form. Crash-safe:
    /// the new file is complete before the old one goes.
    func convert(_ digest: String) throws {
        guard let file = existingFile(for: digest), file.encrypted != (cipher != nil) else { return }
        guard let reader = try? BlobReader(path: file.path, cipher: cipher ?? readingCipher, encrypted: file.encrypted) else {
            throw StoreError(.storage, reason: "cannot read attachment \(digest) to convert it")
        }
        let writer = try makeWriter()
        while true {
            let piece = try reader.next()
            if piece.isEmpty { break }
            try writer.write(piece)
        }
        _ = try writer.finish(expecting: digest)
        try? FileManager.default.removeItem(atPath: file.path)
    }

    /// The cipher that reads leftover encrypted blobs after the database was decrypted.
    var readingCipher: BlobCipher? {
        get { readingCipherBox.withLock { $0 } }
        set { readingCipherBox.withLock { $0 = newValue } }
    }
    private let readingCipherBox = Mutex<BlobCipher?>(nil)

    fileprivate func commit(temporary: String, digest: String, encrypted: Bool) throws {
        guard var final = path(for: digest) else { throw StoreError.badRequest("bad digest") }
        if encrypted { final += Self.encryptedSuffix }
        if FileManager.default.fileExists(atPath: final) {
            try? FileManager.default.removeItem(atPath: temporary)
            return
        }
        guard rename(temporary, final) == 0 else {
            throw StoreError(.storage, reason: "cannot store attachment: errno \(errno)")
        }
        if syncToDisk { Self.syncDirectory(directory) }
    }

    /// The plain file name of a blob (whether or not it exists).
    func path(for digest: String) -> String? {
        guard let name = Self.fileName(for: digest) else { return nil }
        return (directory as NSString).appendingPathComponent(name)
    }

    fileprivate var temporaryPath: String {
        (directory as NSString).appendingPathComponent("tmp/\(UUID().uuidString)")
    }

    fileprivate var shouldSync: Bool { syncToDisk }

    private static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return }
        fsync(fd)
        Glibc.close(fd)
    }

    /// `sha1-<base64>` → lowercase hex file name; nil for anything else.
    static func fileName(for digest: String) -> String? {
        guard digest.hasPrefix("sha1-"),
              let raw = Data(base64Encoded: String(digest.dropFirst(5))), raw.count == 20
        else { return nil }
        return Digests.hex(raw)
    }

    static func digest(forFileName name: String) -> String? {
        guard name.utf8.count == 40 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        var index = name.startIndex
        while index < name.endIndex {
            let next = name.index(index, offsetBy: 2)
            guard let byte = UInt8(name[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return Digests.attachmentDigest(sha1: bytes)
    }
}

/// A blob being written: hashes while it writes to a temporary file.
///
/// One task uses a writer at a time (it is handed to the blocking pool and back, never
/// shared): hence `@unchecked Sendable`.
public final class BlobWriter: @unchecked Sendable {
    private let store: BlobStore
    private let temporary: String
    private let handle: FileHandle
    private var sha = CryptoSHA1()
    private var sealer: BlobCipher.Sealer?
    public private(set) var length = 0
    private var finished = false

    init(store: BlobStore) throws {
        self.store = store
        sealer = store.cipher?.makeSealer()
        temporary = store.temporaryPath
        do {
            try store.createDirectory()
        } catch {
            throw StoreError.storage(error)
        }
        guard FileManager.default.createFile(atPath: temporary, contents: nil),
              let handle = FileHandle(forWritingAtPath: temporary)
        else { throw StoreError(.storage, reason: "cannot create attachment file") }
        self.handle = handle
        if let header = sealer?.header {
            do {
                try handle.write(contentsOf: header)
            } catch {
                try? handle.close()
                try? FileManager.default.removeItem(atPath: temporary)
                finished = true
                throw StoreError.storage(error)
            }
        }
    }

    deinit {
        if !finished {
            try? handle.close()
            try? FileManager.default.removeItem(atPath: temporary)
        }
    }

    /// Throws `StoreError` (507 `insufficient_storage` when the disk is full).
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        sha.update(bytes)
        length += bytes.count
        do {
            if sealer != nil {
                let sealed = try sealer!.add(bytes)
                if !sealed.isEmpty { try handle.write(contentsOf: sealed) }
            } else {
                try handle.write(contentsOf: Data(bytes: bytes.baseAddress!, count: bytes.count))
            }
        } catch {
            throw error as? StoreError ?? StoreError.storage(error)
        }
    }

    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// `write` on the blocking pool (a streamed upload's chunks).
    public func write(_ bytes: [UInt8]) async throws {
        try await BlockingPool.shared.perform { () throws in try self.write(bytes) }
    }

    /// `finish` on the blocking pool: the flush, fsync and rename happen there.
    public func finish(expecting expected: String? = nil) async throws -> (digest: String, length: Int) {
        try await BlockingPool.shared.perform { () throws -> (digest: String, length: Int) in
            try self.finish(expecting: expected)
        }
    }

    /// Flushes, names the blob by its digest and returns it. With `expecting`, content
    /// whose digest differs is dropped (`StoreError.digestMismatch`), not stored: the
    /// digest computed while writing is the check, nothing hashes the bytes twice.
    public func finish(expecting expected: String? = nil) throws -> (digest: String, length: Int) {
        do {
            if sealer != nil { try handle.write(contentsOf: try sealer!.finish()) }
            if store.shouldSync { try handle.synchronize() }
            try handle.close()
        } catch {
            cancel()
            throw StoreError.storage(error)
        }
        let digest = Digests.attachmentDigest(sha1: sha.finalize())
        if let expected, digest != expected {
            cancel()
            throw StoreError.digestMismatch(expected: expected)
        }
        finished = true
        try store.commit(temporary: temporary, digest: digest, encrypted: sealer != nil)
        return (digest, length)
    }

    /// Drops the partial blob.
    public func cancel() {
        guard !finished else { return }
        finished = true
        try? handle.close()
        try? FileManager.default.removeItem(atPath: temporary)
    }
}
