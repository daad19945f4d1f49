import DocumentModel
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// One HTTP request as the REST handlers see it: method, percent-decoded path
/// segments, query parameters, headers and the (still unread) body.
struct RESTRequest: Sendable {
    let method: HTTPRequest.Method
    let segments: [String]
    let query: QueryParameters
    let headers: HTTPFields
    let body: RequestBody
    let isAdmin: Bool

    init(_ request: Request, isAdmin: Bool) throws(HTTPFailure) {
        method = request.method
        let rawPath = request.uri.path
        var segments: [String] = []
        for raw in rawPath.split(separator: "/", omittingEmptySubsequences: true) {
            guard let decoded = PercentDecoding.decode(raw) else {
                throw .badRequest("Invalid percent-encoding in URL path")
            }
            segments.append(decoded)
        }
        self.segments = segments
        query = QueryParameters(request.uri.query)
        headers = request.headers
        body = request.body
        self.isAdmin = isAdmin
    }

    var isRead: Bool { method == .get || method == .head }

    /// Reads the whole body, at most `limit` bytes (else 413).
    func collectBody(limit: Int) async throws(HTTPFailure) -> ByteBuffer {
        do {
            return try await body.collect(upTo: limit)
        } catch {
            throw HTTPFailure(.contentTooLarge, "too_large", "Request body exceeds \(limit) bytes")
        }
    }

    /// Reads and parses a JSON body (415 for a non-JSON content type, 400 for bad JSON).
    func jsonBody(limit: Int) async throws(HTTPFailure) -> JSON {
        if let type = headers[.contentType]?.lowercased(), !type.hasPrefix("application/json"), !type.hasPrefix("text/plain") {
            throw HTTPFailure(.unsupportedMediaType, "bad_content_type", "Content-Type must be application/json")
        }
        let buffer = try await collectBody(limit: limit)
        guard buffer.readableBytes > 0 else { throw .badRequest("Request body is empty: expected JSON") }
        return try Self.parse(buffer)
    }

    private static func parse(_ buffer: ByteBuffer) throws(HTTPFailure) -> JSON {
        do {
            return try buffer.withUnsafeReadableBytes { raw throws(JSONError) in
                try JSON.parse(UnsafeRawBufferPointer(raw).bindMemory(to: UInt8.self))
            }
        } catch {
            throw .badRequest("Invalid JSON: \(error)")
        }
    }

    /// A JSON object body, or nil when the request has no body.
    func optionalJSONObjectBody(limit: Int) async throws(HTTPFailure) -> [String: JSON]? {
        let buffer = try await collectBody(limit: limit)
        guard buffer.readableBytes > 0 else { return nil }
        guard let object = try Self.parse(buffer).objectValue else {
            throw .badRequest("Request body must be a JSON object")
        }
        return object
    }

    /// Throws 403 unless the request came in on the admin port.
    func requireAdmin(_ reason: String) throws(HTTPFailure) {
        guard isAdmin else { throw HTTPFailure(.forbidden, "forbidden", reason) }
    }

    /// A JSON body that must be an object.
    func jsonObjectBody(limit: Int) async throws(HTTPFailure) -> [String: JSON] {
        guard let object = try await jsonBody(limit: limit).objectValue else {
            throw .badRequest("Request body must be a JSON object")
        }
        return object
    }
}
