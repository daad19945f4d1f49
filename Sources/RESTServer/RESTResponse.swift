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

    /// `{"id": …, "ok": true, "rev": …}` with the new revision as ETag.
    static func written(id: String, rev: String, status: HTTPResponse.Status = .created) -> Response {
        json(["id": .string(id), "ok": true, "rev": .string(rev)], status: status, headers: [.eTag: "\"\(rev)\""])
    }
}
