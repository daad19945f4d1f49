import DocumentModel
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A node whose data directory runs out of space answers every write it cannot store
/// with 507 `insufficient_storage` — documents and streamed attachments alike — and
/// takes writes again once space returns. The directory is a small tmpfs of its own
/// (needs root to mount; skipped otherwise).
@Suite(.serialized) struct DiskFullRESTTests {
    @Test func writesOnAFullDiskAre507AndResume() async throws {
        let directory = TemporaryDirectory(prefix: "shoal-full-rest")
        defer { directory.remove() }
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=4m", "tmpfs", directory.path]
        mount.standardError = FileHandle.nullDevice
        guard getuid() == 0, (try? mount.run()) != nil, ({ mount.waitUntilExit(); return mount.terminationStatus == 0 })() else {
            print("DiskFullRESTTests skipped: mounting a tmpfs needs root")
            return
        }
        defer { _ = umount2(directory.path, Int32(MNT_DETACH)) }
        let node = try await TestNode.start(persistent: true, directory: directory)
        defer { Task { await node.stop(keepingData: true) } }
        let created = try await node.request("PUT", "/db/doc", json: ["a": 1], admin: true)
        #expect(created.status == 201)
        let rev = try #require(created.json["rev"]?.stringValue)

        // Fill what is left of the disk.
        let filler = directory.path + "/filler"
        #expect(FileManager.default.createFile(atPath: filler, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: filler))
        let chunk = Data(count: 64 * 1024)
        while (try? handle.write(contentsOf: chunk)) != nil {}
        try? handle.close()

        let attachment = Array(repeating: UInt8(7), count: 200_000)
        let refused = try await node.request(
            "PUT", "/db/doc/big.bin?rev=\(rev)", raw: attachment, headers: ["Content-Type": "application/octet-stream"], admin: true)
        #expect(refused.status == 507, "\(refused)")
        #expect(refused.json["error"] == "insufficient_storage")
        var document = try await node.request("PUT", "/db/other", json: ["pad": .string(String(repeating: "x", count: 200_000))], admin: true)
        #expect(document.status == 507, "\(document)")
        #expect(try await node.request("GET", "/db/doc", admin: true).json["a"] == 1)

        try FileManager.default.removeItem(atPath: filler)
        let stored = try await node.request(
            "PUT", "/db/doc/big.bin?rev=\(rev)", raw: attachment, headers: ["Content-Type": "application/octet-stream"], admin: true)
        #expect(stored.status == 201, "\(stored)")
        #expect(try await node.request("GET", "/db/doc/big.bin", admin: true).body.count == attachment.count)
        document = try await node.request("PUT", "/db/other", json: ["pad": "x"], admin: true)
        #expect(document.status == 201, "\(document)")
    }
}
