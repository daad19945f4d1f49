import DocumentStore
import Foundation
import Logging

/// Rekeys a database of a stopped node (`shoal rekey`): opens it with the old key (or
/// none), re-encrypts it with the new key (or none), closes it.
public enum DatabaseRekey {
    /// Refuses to touch a database file that a running process has open.
    public static func run(
        dataDirectory: String, database: String, from old: EncryptionSource?, to new: EncryptionSource?
    ) async throws -> RekeyReport {
        let path = (dataDirectory as NSString).appendingPathComponent("\(database).sqlite3")
        guard FileManager.default.fileExists(atPath: path) else {
            throw EncryptionError(.failed, database: database, reason: "there is no \(path)")
        }
        if let pid = processHolding(path) {
            throw EncryptionError(.failed, database: database,
                reason: "process \(pid) has \(path) open: stop the node, or rotate the key with POST /\(database)/_rekey on its admin port")
        }
        let oldKey: EncryptionKey?
        let newKey: EncryptionKey?
        do throws(EncryptionError) {
            oldKey = try old?.load()
            newKey = try new?.load()
        } catch {
            throw error.naming(database)
        }
        let store = try DocumentStore(configuration: StoreConfiguration(
            name: database, location: .directory(dataDirectory), encryption: oldKey), logger: Logger(label: "CRUD"))
        defer { store.close() }
        return try await store.rekey(to: newKey)
    }

    /// The ID of another process that has `path` open (Linux: /proc/*/fd), if any.
    static func processHolding(_ path: String) -> Int32? {
        let target = (path as NSString).resolvingSymlinksInPath
        let me = ProcessInfo.processInfo.processIdentifier
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), pid != me else { continue }
            let fds = "/proc/\(entry)/fd"
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? [] {
                if let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fds)/\(fd)"), link == target {
                    return pid
                }
            }
        }
        return nil
    }
}
