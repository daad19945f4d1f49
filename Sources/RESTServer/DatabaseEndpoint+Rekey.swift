import DocumentModel
import DocumentStore
import Hummingbird

extension DatabaseEndpoint {
    /// `POST /{db}/_rekey` (admin port): `{"key_file": …}`, `{"passphrase_file": …}`,
    /// `{"passphrase_env": …}` re-encrypts the database with that key; `{"decrypt": true}`
    /// decrypts it. Requests wait while the file is swapped.
    func rekey(registry: any DatabaseRegistry) async throws -> Response {
        try allow(request, "POST", request.method == .post)
        try request.requireAdmin("Databases are rekeyed on the admin port")
        let body = try await request.jsonObjectBody(limit: configuration.maxRequestBytes)
        do {
            let report = try await registry.rekey(database: store.name, settings: body)
            return RESTResponse.json([
                "ok": true, "encrypted": .bool(report.isEncrypted), "was_encrypted": .bool(report.wasEncrypted),
                "bytes": .int(Int64(report.bytes)), "paused_seconds": .double(report.pausedSeconds),
            ])
        } catch let error as EncryptionError {
            switch error.kind {
            case .badKey, .notEncrypted, .keyRequired: throw HTTPFailure.badRequest(error.description)
            default: throw HTTPFailure(.internalServerError, "internal_error", error.description)
            }
        }
    }
}
