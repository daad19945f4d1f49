import AccessControl
import DocumentModel
import DocumentStore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Query

/// The endpoints under `/{db}/` for one request against one database.
struct DatabaseEndpoint: Sendable {
    let store: DocumentStore
    let request: RESTRequest
    let configuration: RESTConfiguration
    let logger: Logger
    /// Who makes the request (`.admin` on the admin port or without access control).
    var principal: Principal = .admin
    /// The database's security, when it has access control.
    var security: DatabaseSecurity?
    /// The database's views (design documents' map/reduce indexes), when the server has them.
    var views: ViewEngine?

    var query: QueryParameters { request.query }

    /// `GET /{db}/` (database info) and `POST /{db}/` (create a document with a
    /// generated ID).
    func root() async throws -> Response {
        switch request.method {
        case .get, .head:
            let info = store.info()
            return RESTResponse.json([
                "db_name": .string(store.name),
                "doc_count": .int(Int64(info.docCount)),
                "update_seq": .int(Int64(info.updateSequence)),
                "committed_update_seq": .int(Int64(info.updateSequence)),
                "purge_seq": .int(Int64(info.purgeSequence)),
                "compact_running": false,
                "disk_format_version": 0,
                "instance_start_time": .string(String(configuration.startTime)),
                "state": "Online",
            ])
        case .post:
            var body = try await request.jsonObjectBody(limit: documentLimit)
            let givenID = body.removeValue(forKey: "_id")
            if let givenID, givenID.stringValue == nil { throw HTTPFailure.badRequest("Invalid _id: must be a string") }
            let id = givenID?.stringValue ?? Self.generateDocID()
            let update = try DocumentUpdateParser.parse(body, docID: id, explicitRev: nil, newEdits: true)
            let result = try await save(update)
            return RESTResponse.written(id: id, rev: result.revID.description, cv: result.version?.current)
        case .put:
            throw HTTPFailure(.preconditionFailed, "file_exists", "The database could not be created, the file already exists.")
        default:
            throw HTTPFailure.methodNotAllowed("GET,HEAD,POST")
        }
    }

    /// The largest JSON body accepted for one document: the document limit plus room
    /// for inline base64 attachments.
    var documentLimit: Int { max(configuration.maxRequestBytes, store.configuration.maxDocumentSize) }

    func save(_ update: DocumentUpdate, origin: RevisionOrigin? = nil) async throws(HTTPFailure) -> WriteResult {
        do {
            return try await store.save(update, author: principal.author, origin: origin ?? localOrigin)
        } catch {
            throw HTTPFailure(error)
        }
    }

    /// What revisions written by this request are recorded as: `local`, on this node,
    /// by the user who made the request (none for an administrator).
    var localOrigin: RevisionOrigin {
        RevisionOrigin(kind: .local, node: configuration.nodeID, detail: principal.access.map { "user \($0.user.name)" })
    }

    /// A random 128-bit ID as 32 lowercase hex digits, like Sync Gateway's.
    static func generateDocID() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return String(format: "%016llx%016llx", high, low)
    }
}

/// Turns a client's JSON document into a `DocumentUpdate`: strips and checks the
/// `_id`/`_rev`/`_deleted`/`_revisions` metadata, ignores read-only metadata.
enum DocumentUpdateParser {
    /// Metadata a client may send back from a read; it is ignored on write.
    static let ignored: Set<String> = ["_conflicts", "_deleted_conflicts", "_revs_info", "_local_seq", "_exp", "_cv"]

    static func parse(
        _ json: consuming [String: JSON], docID: String, explicitRev: String?, newEdits: Bool
    ) throws(HTTPFailure) -> DocumentUpdate {
        // Consumed: the caller's last copy is edited in place (no copy per document).
        var body = consume json
        if let bodyID = body.removeValue(forKey: "_id") {
            guard bodyID.stringValue == docID else {
                throw .badRequest("The document ID in the body does not match the URL")
            }
        }
        let bodyRev = body.removeValue(forKey: "_rev")
        if let bodyRev, bodyRev.stringValue == nil { throw .badRequest("Invalid _rev: must be a string") }
        if let explicitRev, let bodyRev = bodyRev?.stringValue, bodyRev != explicitRev {
            throw .badRequest("Document rev from request body and query string have different values")
        }
        let revString = explicitRev ?? bodyRev?.stringValue
        let deletedValue = body.removeValue(forKey: "_deleted")
        let deleted = deletedValue?.boolValue ?? false
        let revisions = body.removeValue(forKey: "_revisions")
        for key in ignored { body.removeValue(forKey: key) }
        if DesignDocument.isDesign(docID), !deleted { try validateDesign(docID: docID, body: body) }

        if newEdits {
            var parent: RevID?
            if let revString, !revString.isEmpty {
                guard let rev = RevID(revString) else { throw .badRequest("Invalid revision ID: \(revString)") }
                parent = rev
            }
            return DocumentUpdate(docID: docID, body: body, deleted: deleted, mode: .edit(parent: parent))
        }
        var history: [RevID]
        if let revisions {
            guard let decoded = RevisionsJSON.decode(revisions), !decoded.isEmpty else {
                throw .badRequest("Invalid _revisions")
            }
            history = decoded
            if let revString, revString != decoded[0].description {
                throw .badRequest("_rev does not match _revisions")
            }
        } else {
            guard let revString, let rev = RevID(revString) else {
                throw .badRequest("new_edits=false requires a valid _rev or _revisions")
            }
            history = [rev]
        }
        return DocumentUpdate(docID: docID, body: body, deleted: deleted, mode: .replicate(history: history))
    }

    /// A design document's views must be well formed and compile (400 with the engine's
    /// message), so that bad JavaScript fails at `PUT`, not at query time.
    static func validateDesign(docID: String, body: [String: JSON]) throws(HTTPFailure) {
        do {
            try DesignDocument.validate(id: docID, body: body)
        } catch {
            throw HTTPFailure(error)
        }
    }
}
