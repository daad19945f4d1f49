import DocumentModel
import DocumentStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension DatabaseEndpoint {
    /// `GET/HEAD/PUT/DELETE /{db}/{doc}/{attachment}`.
    func attachment(docID: String, name: String) async throws -> Response {
        switch request.method {
        case .get, .head: return try await getAttachment(docID: docID, name: name)
        case .put: return try await putAttachment(docID: docID, name: name)
        case .delete: return try await deleteAttachment(docID: docID, name: name)
        default: throw HTTPFailure.methodNotAllowed("GET,HEAD,PUT,DELETE")
        }
    }

    private func getAttachment(docID: String, name: String) async throws -> Response {
        let rev = try requestedRev().map(parseRev)
        try await requireReadable(docID: docID, rev: rev)
        let revision: Revision
        do {
            revision = try await store.revision(docID, rev: rev).1
        } catch {
            throw HTTPFailure(error)
        }
        guard let info = revision.attachments[name], let reader = store.blobs.openReader(info.digest)
        else { throw HTTPFailure.notFound("missing attachment") }
        let headers: HTTPFields = [
            .contentType: info.contentType,
            .eTag: "\"\(info.digest)\"",
            .contentLength: String(info.length),
        ]
        let body = ResponseBody(contentLength: info.length) { writer in
            while true {
                let chunk = try await reader.nextOffThePool()
                if chunk.isEmpty { break }
                try await writer.write(ByteBuffer(bytes: chunk))
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    /// Streams the request body into a blob, then saves a new revision whose
    /// `_attachments` has it (creating the document if it does not exist and no
    /// revision was named).
    private func putAttachment(docID: String, name: String) async throws -> Response {
        let rev = try requestedRev().map(parseRev)
        let contentType = request.headers[.contentType] ?? "application/octet-stream"
        let writer = try store.blobs.makeWriter()
        do {
            for try await buffer in request.body {
                try await writer.write(Array(buffer.readableBytesView))
                if writer.length > configuration.maxAttachmentBytes {
                    throw HTTPFailure(.contentTooLarge, "too_large", "Attachment exceeds \(configuration.maxAttachmentBytes) bytes")
                }
            }
        } catch {
            writer.cancel()
            throw error
        }
        let blob = try await writer.finish()
        var body = try await currentBody(docID: docID, rev: rev)
        var attachments = body["_attachments"]?.objectValue ?? [:]
        // No revpos: the store gives a new attachment the new revision's generation.
        attachments[name] = ["content_type": .string(contentType), "digest": .string(blob.digest), "length": .int(Int64(blob.length))]
        body["_attachments"] = .object(attachments)
        let result = try await save(DocumentUpdate(docID: docID, body: body, mode: .edit(parent: rev)))
        return RESTResponse.written(id: docID, rev: result.revID.description, cv: result.version?.current)
    }

    private func deleteAttachment(docID: String, name: String) async throws -> Response {
        guard let rev = try requestedRev().map(parseRev) else { throw HTTPFailure.conflict }
        var body = try await currentBody(docID: docID, rev: rev)
        guard var attachments = body["_attachments"]?.objectValue, attachments.removeValue(forKey: name) != nil else {
            throw HTTPFailure.notFound("missing attachment")
        }
        body["_attachments"] = attachments.isEmpty ? nil : .object(attachments)
        let result = try await save(DocumentUpdate(docID: docID, body: body, mode: .edit(parent: rev)))
        return RESTResponse.written(id: docID, rev: result.revID.description, cv: result.version?.current, status: .ok)
    }

    /// The body of the revision being extended (empty for a new document).
    private func currentBody(docID: String, rev: RevID?) async throws(HTTPFailure) -> [String: JSON] {
        guard let rev else { return [:] }
        do {
            return try await store.revision(docID, rev: rev).1.body ?? [:]
        } catch {
            throw error.kind == .notFound ? HTTPFailure.conflict : HTTPFailure(error)
        }
    }
}
