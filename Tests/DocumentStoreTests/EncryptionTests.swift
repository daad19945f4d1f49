import Crypto
import DocumentModel
@testable import DocumentStore
import Foundation
import GRDB
import Testing
import TestSupport

/// Encryption at rest: the encrypting VFS, the attachment cipher, wrong keys and rekeys.
@Suite struct EncryptionTests {
    static let marker = "ZEBRAFISH-MARKER"
    static let keyA = EncryptionKey.key(Array(repeating: 0xA5, count: 32))
    static let keyB = EncryptionKey.key((0..<32).map { UInt8($0) })

    static func configuration(_ directory: TemporaryDirectory, _ key: EncryptionKey?) -> StoreConfiguration {
        StoreConfiguration(name: "db", location: .directory(directory.path), durability: .normal, encryption: key)
    }

    /// Documents with the marker in bodies, IDs and local documents, plus attachments
    /// (inline and streamed, over one 64 KiB chunk) that contain it.
    static func fill(_ store: DocumentStore, count: Int = 200) async throws {
        for index in 0..<count {
            try await store.put("doc-\(marker)-\(index)", ["text": .string("\(marker) number \(index)"), "n": .int(Int64(index))])
        }
        let inline = Data("inline \(marker) attachment".utf8).base64EncodedString()
        try await store.put("with-attachments", ["_attachments": ["a.txt": ["content_type": "text/plain", "data": .string(inline)]]])
        let writer = try store.blobs.makeWriter()
        let big = Array(String(repeating: "\(marker) ", count: 20_000).utf8)
        try await writer.write(big)
        let blob = try await writer.finish()
        try await store.put("big", ["_attachments": ["big.bin": ["content_type": "application/octet-stream", "digest": .string(blob.digest), "length": .int(Int64(blob.length)), "revpos": 1, "stub": true]]])
        _ = try await store.putLocal("checkpoint-\(marker)", body: ["seq": .string(marker)], rev: nil)
    }

    /// Files under `directory` whose bytes contain `marker`.
    static func filesContainingMarker(_ directory: String) -> [String] {
        let needle = Data(marker.utf8)
        var found: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let relative = enumerator?.nextObject() as? String {
            let path = (directory as NSString).appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  let data = FileManager.default.contents(atPath: path)
            else { continue }
            if data.range(of: needle) != nil { found.append(relative) }
        }
        return found
    }

    static func fingerprint(_ directory: String) -> [String: String] {
        var result: [String: String] = [:]
        for name in (try? FileManager.default.subpathsOfDirectory(atPath: directory)) ?? [] {
            let path = (directory as NSString).appendingPathComponent(name)
            if let data = FileManager.default.contents(atPath: path) {
                result[name] = SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
            }
        }
        return result
    }

    static func expectEncryptionError(_ kind: EncryptionError.Kind, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("expected \(kind)")
        } catch let error as EncryptionError {
            #expect(error.kind == kind, "\(error)")
            #expect(error.database == "db")
        } catch {
            Issue.record("expected EncryptionError.\(kind), got \(error)")
        }
    }

    static func expectContent(_ store: DocumentStore, count: Int = 200) async throws {
        #expect(store.info().docCount == count + 2)
        let (_, revision) = try await store.revision("doc-\(marker)-7")
        #expect(revision.body?["text"] == .string("\(marker) number 7"))
        let big = try #require(try await store.revision("big").1.attachments["big.bin"])
        await #expect(store.blobs.read(big.digest) == Array(String(repeating: "\(marker) ", count: 20_000).utf8))
        #expect(store.blobs.length(of: big.digest) == big.length)
        let small = try #require(try await store.revision("with-attachments").1.attachments["a.txt"])
        await #expect(store.blobs.read(small.digest) == Array("inline \(marker) attachment".utf8))
        #expect(try await store.integrityCheck() == ["ok"])
    }

    @Test func nothingOnDiskShowsTheMarker() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try DocumentStore(configuration: Self.configuration(directory, Self.keyA))
        try await Self.fill(store)
        // While open: the WAL holds the recent pages.
        #expect(FileManager.default.fileExists(atPath: directory.path + "/db.sqlite3-wal"))
        #expect(Self.filesContainingMarker(directory.path) == [])
        try await Self.expectContent(store)
        await store.close()
        #expect(Self.filesContainingMarker(directory.path) == [])

        // The same writes into a plain store do show it (the scan can fail).
        let plainDirectory = TemporaryDirectory()
        defer { plainDirectory.remove() }
        let plain = try DocumentStore(configuration: Self.configuration(plainDirectory, nil))
        try await Self.fill(plain)
        await plain.close()
        #expect(!Self.filesContainingMarker(plainDirectory.path).isEmpty)
    }

    @Test func reopensWithItsKeyAndSurvivesCheckpointAndVacuum() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var store = try DocumentStore(configuration: Self.configuration(directory, Self.keyA))
        try await Self.fill(store)
        try await store.compact()
        try await store.writer.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
        try await Self.expectContent(store)
        await store.close()
        store = try DocumentStore(configuration: Self.configuration(directory, Self.keyA))
        defer { store.close() }
        try await Self.expectContent(store)
        #expect(store.isEncrypted)
    }

    @Test func aWrongKeyIsRefusedAndChangesNothing() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try DocumentStore(configuration: Self.configuration(directory, Self.keyA))
        try await Self.fill(store, count: 20)
        await store.close()
        let before = Self.fingerprint(directory.path)
        Self.expectEncryptionError(.wrongKey) { _ = try DocumentStore(configuration: Self.configuration(directory, Self.keyB)) }
        Self.expectEncryptionError(.wrongKey) {
            _ = try DocumentStore(configuration: Self.configuration(directory, .passphrase("not the key")))
        }
        Self.expectEncryptionError(.keyRequired) { _ = try DocumentStore(configuration: Self.configuration(directory, nil)) }
        #expect(Self.fingerprint(directory.path) == before)
        let again = try DocumentStore(configuration: Self.configuration(directory, Self.keyA))
        #expect(again.info().docCount == 22)
        await again.close()
        let message = String(describing: EncryptionError(.wrongKey, database: "todo", reason: ""))
        #expect(message == "wrong encryption key for database todo")
    }

    @Test func aPlainDatabaseGivenAKeyIsRefused() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try DocumentStore(configuration: Self.configuration(directory, nil))
        try await store.put("a", ["x": 1])
        await store.close()
        let before = Self.fingerprint(directory.path)
        Self.expectEncryptionError(.notEncrypted) { _ = try DocumentStore(configuration: Self.configuration(directory, Self.keyA)) }
        #expect(Self.fingerprint(directory.path) == before)
    }

    @Test func truncatedAndCorruptedFilesAreReportedAsSuch() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try DocumentStore(configuration: Self.configuration(directory, Self.keyA))
        try await Self.fill(store, count: 50)
        try await store.compact()  // everything into the main file
        await store.close()
        let path = directory.path + "/db.sqlite3"
        let original = try #require(FileManager.default.contents(atPath: path))

        var corrupted = original
        corrupted[100] ^= 0x01
        try corrupted.write(to: URL(fileURLWithPath: path))
        Self.expectEncryptionError(.corrupted) { _ = try DocumentStore(configuration: Self.configuration(directory, Self.keyA)) }

        try original.prefix(4096 + 1000).write(to: URL(fileURLWithPath: path))
        Self.expectEncryptionError(.truncated) { _ = try DocumentStore(configuration: Self.configuration(directory, Self.keyA)) }
        try original.prefix(1000).write(to: URL(fileURLWithPath: path))
        Self.expectEncryptionError(.truncated) { _ = try DocumentStore(configuration: Self.configuration(directory, Self.keyA)) }
    }

    @Test func aPassphraseDerivesTheKeyWithTheDatabasesSalt() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let secret = EncryptionKey.passphrase("correct horse battery staple")
        let store = try DocumentStore(configuration: Self.configuration(directory, secret))
        try await store.put("a", ["secret": .string(Self.marker)])
        await store.close()
        #expect(Self.filesContainingMarker(directory.path) == [])
        Self.expectEncryptionError(.wrongKey) {
            _ = try DocumentStore(configuration: Self.configuration(directory, .passphrase("correct horse battery stable")))
        }
        let again = try DocumentStore(configuration: Self.configuration(directory, secret))
        #expect(try await again.revision("a").1.body?["secret"] == .string(Self.marker))
        await again.close()
    }

    @Test func rekeyEncryptsRotatesAndDecryptsWithEveryWriteKept() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let first = try DocumentStore(configuration: Self.configuration(directory, nil))
        try await Self.fill(first)
        #expect(!Self.filesContainingMarker(directory.path).isEmpty)

        // Plain → encrypted, while a writer keeps writing.
        var store = first
        let writes = Task {
            let store = first
            var written = 0
            for index in 0..<300 {
                if (try? await store.put("during-\(index)", ["i": .int(Int64(index))])) != nil { written += 1 }
            }
            return written
        }
        let report = try await store.rekey(to: Self.keyA)
        #expect(report.isEncrypted && !report.wasEncrypted)
        #expect(await writes.value == 300)
        #expect(store.info().docCount == 202 + 300)
        try await Self.expectContent(store, count: 500)
        #expect(Self.filesContainingMarker(directory.path) == [])
        #expect(store.blobs.digests(encrypted: false).isEmpty)
        await store.close()
        Self.expectEncryptionError(.keyRequired) { _ = try DocumentStore(configuration: Self.configuration(directory, nil)) }

        // A → B: A no longer opens it.
        store = try DocumentStore(configuration: Self.configuration(directory, Self.keyA))
        try await store.rekey(to: Self.keyB)
        try await Self.expectContent(store, count: 500)
        await store.close()
        Self.expectEncryptionError(.wrongKey) { _ = try DocumentStore(configuration: Self.configuration(directory, Self.keyA)) }

        // B → plain: attachments decrypted, the attachment key forgotten.
        store = try DocumentStore(configuration: Self.configuration(directory, Self.keyB))
        try await store.rekey(to: nil)
        try await Self.expectContent(store, count: 500)
        #expect(store.blobs.digests(encrypted: true).isEmpty)
        let leftover = try await store.writer.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM info WHERE key = 'attachment_key'")
        }
        #expect(leftover == nil)
        await store.close()
        store = try DocumentStore(configuration: Self.configuration(directory, nil))
        try await Self.expectContent(store, count: 500)
        await store.close()
    }

    /// SQLite's temporary files (here a temp table forced to disk) are encrypted too;
    /// they are unlinked as soon as they are opened, so they are read through /proc/self/fd.
    /// (Once any key is installed, every temporary file of the process is encrypted, so
    /// a plain control cannot run in this process; the size check shows the data is there.)
    @Test func temporaryFilesSpilledBySQLiteAreEncrypted() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try DocumentStore(configuration: Self.configuration(directory, Self.keyA))
        defer { store.close() }
        let needle = Data(Self.marker.utf8)
        let leaked = try await store.writer.writeWithoutTransaction { db -> Bool in
            try db.execute(sql: "PRAGMA temp_store = FILE")
            try db.execute(sql: "CREATE TEMP TABLE spill(x TEXT)")
            try db.execute(sql: "PRAGMA temp.cache_size = 2")
            for index in 0..<3000 {
                try db.execute(sql: "INSERT INTO temp.spill(x) VALUES (?)", arguments: ["\(Self.marker) \(index) \(String(repeating: "y", count: 200))"])
            }
            var found = false
            var sawTemporary = false
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
                guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
                      link.contains("etilqs") else { continue }
                guard let data = FileManager.default.contents(atPath: "/proc/self/fd/\(fd)") else { continue }
                if data.count > 600_000 { sawTemporary = true }   // the spilled table (3000 × 220 bytes)
                if data.range(of: needle) != nil { found = true }
            }
            try db.execute(sql: "DROP TABLE temp.spill")
            #expect(sawTemporary, "SQLite kept the temp table in memory; the test saw no temporary file")
            return found
        }
        #expect(!leaked)
    }

    @Test func blobCipherRejectsTamperingAndTruncation() throws {
        let cipher = BlobCipher(key: Array(repeating: 7, count: 32))
        for size in [0, 1, BlobCipher.chunk - 1, BlobCipher.chunk, BlobCipher.chunk + 1, 3 * BlobCipher.chunk] {
            var sealer = cipher.makeSealer()
            let plain = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            var file = sealer.header
            file += try plain.withUnsafeBytes { try sealer.add($0) }
            file += try sealer.finish()
            #expect(BlobCipher.plaintextLength(fileSize: file.count) == size)
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let path = directory.path + "/blob.enc"
            try Data(file).write(to: URL(fileURLWithPath: path))
            #expect(try BlobReader(path: path, cipher: cipher, encrypted: true).readAll() == plain)
            // A flipped byte, or the last chunk cut off, fails authentication.
            var flipped = file
            flipped[BlobCipher.headerSize] ^= 1
            try Data(flipped).write(to: URL(fileURLWithPath: path))
            #expect(throws: (any Error).self) { try BlobReader(path: path, cipher: cipher, encrypted: true).readAll() }
            if size > BlobCipher.chunk {
                try Data(file.prefix(BlobCipher.headerSize + BlobCipher.chunk + BlobCipher.tag)).write(to: URL(fileURLWithPath: path))
                #expect(throws: (any Error).self) { try BlobReader(path: path, cipher: cipher, encrypted: true).readAll() }
            }
        }
    }

    @Test func keyFilesAreRawOrHex() throws {
        let hex = String(repeating: "0f", count: 32)
        #expect(try EncryptionKey(keyFileContents: Data((hex + "\n").utf8)) == .key(Array(repeating: 0x0f, count: 32)))
        #expect(try EncryptionKey(keyFileContents: Data(Array(repeating: 9, count: 32))) == .key(Array(repeating: 9, count: 32)))
        #expect(throws: EncryptionError.self) { try EncryptionKey(keyFileContents: Data("short".utf8)) }
        #expect(try EncryptionKey(passphraseFileContents: Data("pass phrase\nignored".utf8)) == .passphrase("pass phrase"))
        #expect(throws: EncryptionError.self) { try EncryptionKey(passphraseFileContents: Data("\n".utf8)) }
    }
}
