import ArgumentParser
import DocumentStore
import Foundation

/// `shoal keygen FILE`: writes a new random 256-bit key as 64 hex digits, readable by its owner only.
struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write a new random encryption key file (mode 0600).")

    @Argument(help: "The key file to create (it must not exist).")
    var file: String

    func run() throws {
        guard !FileManager.default.fileExists(atPath: file) else {
            throw ValidationError("\(file) exists; a key file is never overwritten")
        }
        let hex = EncryptionKey.random().hex! + "\n"
        guard FileManager.default.createFile(atPath: file, contents: Data(hex.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ValidationError("cannot create \(file)")
        }
        print("wrote a new key to \(file)")
    }
}
