import DocumentModel
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Content-addressed attachment blobs: one file per `sha1-<base64>` digest in a
/// directory beside the database, written to a temporary file and renamed so a
/// blob is either whole or absent.
public final class BlobStore: Sendable {
    public let directory: String
    private let removeOnClose: Bool
    private let syncToDisk: Bool

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
        try FileManager.default.createDirectory(
            atPath: (self.directory as NSString).appendingPathComponent("tmp"),
            withIntermediateDirectories: true)
    }

    func close() {
        if removeOnClose { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// The file that holds a blob (whether or not it exists).
    public func path(for digest: String) -> String? {
        guard let name = Self.fileName(for: digest) else { return nil }
        return (directory as NSString).appendingPathComponent(name)
    }

    /// True when the blob is stored.
    public func contains(_ digest: String) -> Bool {
        guard let path = path(for: digest) else { return false }
        return FileManager.default.fileExists(atPath: path)
    }

    /// The blob's whole content (for inline `attachments=true` and small reads).
    public func read(_ digest: String) -> [UInt8]? {
        guard let path = path(for: digest), let data = FileManager.default.contents(atPath: path) else {
            return nil
        }
        return [UInt8](data)
    }

    /// Stores bytes held in memory (inline base64 attachments).
    public func store(_ bytes: [UInt8]) throws -> (digest: String, length: Int) {
        let writer = try makeWriter()
        try writer.write(bytes)
        return try writer.finish()
    }

    /// Starts a streamed write; feed it chunks, then `finish()` it.
    public func makeWriter() throws -> BlobWriter {
        try BlobWriter(store: self)
    }

    /// Every stored blob's digest.
    func allDigests() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap(Self.digest(forFileName:))
    }

    func remove(_ digest: String) {
        guard let path = path(for: digest) else { return }
        try? FileManager.default.removeItem(atPath: path)
    }

    fileprivate func commit(temporary: String, digest: String) throws {
        guard let final = path(for: digest) else { throw StoreError.badRequest("bad digest") }
        if FileManager.default.fileExists(atPath: final) {
            try? FileManager.default.removeItem(atPath: temporary)
            return
        }
        guard rename(temporary, final) == 0 else {
            throw StoreError(.storage, reason: "cannot store attachment: errno \(errno)")
        }
        if syncToDisk { Self.syncDirectory(directory) }
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
public final class BlobWriter {
    private let store: BlobStore
    private let temporary: String
    private let handle: FileHandle
    private var sha = SHA1()
    public private(set) var length = 0
    private var finished = false

    init(store: BlobStore) throws {
        self.store = store
        temporary = store.temporaryPath
        guard FileManager.default.createFile(atPath: temporary, contents: nil),
              let handle = FileHandle(forWritingAtPath: temporary)
        else { throw StoreError(.storage, reason: "cannot create attachment file") }
        self.handle = handle
    }

    deinit {
        if !finished {
            try? handle.close()
            try? FileManager.default.removeItem(atPath: temporary)
        }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        sha.update(bytes)
        length += bytes.count
        try handle.write(contentsOf: Data(bytes: bytes.baseAddress!, count: bytes.count))
    }

    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Flushes, names the blob by its digest and returns it.
    public func finish() throws -> (digest: String, length: Int) {
        finished = true
        if store.shouldSync { try handle.synchronize() }
        try handle.close()
        let digest = Digests.attachmentDigest(sha1: sha.finalize())
        try store.commit(temporary: temporary, digest: digest)
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
