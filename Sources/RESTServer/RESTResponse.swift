import DocumentModel
import HTTPTypes
import Hummingbird
import NIOCore

/// Builders for the JSON responses every endpoint returns.
enum RESTResponse {
    static func json(_ value: JSON, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        value.encode(into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func failure(_ failure: HTTPFailure) -> Response {
        json(failure.json, status: failure.status, headers: failure.headers)
    }

    /// `{"id": …, "ok": true, "rev": …, "cv": …}` with the new revision as ETag; `cv`, the
    /// revision's current version, as Sync Gateway 4 answers (left out when nil).
    static func written(id: String, rev: String, cv: Version? = nil, status: HTTPResponse.Status = .created) -> Response {
        var object: [String: JSON] = ["id": .string(id), "ok": true, "rev": .string(rev)]
        if let cv { object["cv"] = .string(cv.description) }
        return json(.object(object), status: status, headers: [.eTag: "\"\(rev)\""])
    }
}
