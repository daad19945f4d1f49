import Foundation
import Glibc
import Testing
import TestSupport
@testable import ShoalNode

/// The data directory's small files are replaced whole, with exact permissions, leave
/// nothing behind, and a write that cannot happen says which file and why.
struct DurableFileTests {
    @Test func replacesTheFileWholeWithItsPermissions() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/key.pem"
        try DurableFile.replace(path, with: Array("first".utf8), permissions: 0o600)
        try DurableFile.replace(path, with: Array("second, longer".utf8), permissions: 0o600)
        #expect(FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) } == "second, longer")
        var status = stat()
        #expect(stat(path, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
        // Only the file itself: no `.tmp` beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["key.pem"])
    }

    @Test func aFailedWriteNamesTheFileAndTheReasonAndKeepsTheOldOne() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let missing = directory.path + "/no/such/dir/node-id"
        let error = try #require(throws: DurableFile.Failure.self) {
            try DurableFile.replace(missing, with: Array("x".utf8))
        }
        #expect(error.description == "cannot create \(missing).tmp: No such file or directory")
        // A directory in the way of the rename: the old content stays, the temporary goes.
        let blocked = directory.path + "/blocked"
        try FileManager.default.createDirectory(atPath: blocked + "/inside", withIntermediateDirectories: true)
        #expect(throws: DurableFile.Failure.self) { try DurableFile.replace(blocked, with: Array("x".utf8)) }
        #expect(FileManager.default.fileExists(atPath: blocked + "/inside"))
        #expect(!FileManager.default.fileExists(atPath: blocked + ".tmp"))
    }

    @Test func theNodeIDIsWrittenOnceAndReadBack() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let data = directory.path + "/data"
        let id = try NodeIdentity.load(dataDirectory: data)
        #expect(UUID(uuidString: id) != nil)
        #expect(try NodeIdentity.load(dataDirectory: data) == id)
        #expect(try FileManager.default.contentsOfDirectory(atPath: data) == ["node-id"])
    }
}
