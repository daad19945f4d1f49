import ArgumentParser
import DocumentStore
import Foundation
import ShoalNode

/// `shoal rekey`: encrypts, re-encrypts or decrypts a database of a stopped node.
struct Rekey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Encrypt, re-encrypt or decrypt a database (node stopped; a running node: POST /{db}/_rekey).")

    @Option(name: .long, help: "Data directory (default: ./shoal-data).")
    var data = "./shoal-data"

    @Option(name: .long, help: "The database (default: db).")
    var db = "db"

    @Option(name: .customLong("old-key-file"), help: "Its current key file (omit both --old-… for a plain database).")
    var oldKeyFile: String?

    @Option(name: .customLong("old-passphrase-file"), help: "Its current passphrase file.")
    var oldPassphraseFile: String?

    @Option(name: .customLong("new-key-file"), help: "The new key file (omit both --new-… to decrypt).")
    var newKeyFile: String?

    @Option(name: .customLong("new-passphrase-file"), help: "The new passphrase file.")
    var newPassphraseFile: String?

    func run() async throws {
        guard oldKeyFile == nil || oldPassphraseFile == nil, newKeyFile == nil || newPassphraseFile == nil else {
            throw ValidationError("give one key file or one passphrase file per side")
        }
        let old = oldKeyFile.map(EncryptionSource.keyFile) ?? oldPassphraseFile.map(EncryptionSource.passphraseFile)
        let new = newKeyFile.map(EncryptionSource.keyFile) ?? newPassphraseFile.map(EncryptionSource.passphraseFile)
        guard old != nil || new != nil else { throw ValidationError("nothing to do: give an --old-… or a --new-… key") }
        do {
            let report = try await DatabaseRekey.run(dataDirectory: data, database: db, from: old, to: new)
            let state = report.isEncrypted ? "encrypted with the new key" : "decrypted"
            print("database \(db): \(state) (\(report.bytes) bytes)")
        } catch let error as EncryptionError {
            FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
            throw ExitCode(EncryptionError.exitStatus)
        }
    }
}
