import DocumentModel
import NIOCore

/// The `_bulk_docs` request of the HTTP benchmarks (new documents with the 1 KB sample
/// body) and the check of its answer.
public enum BulkDocsRequest {
    /// `{"docs":[{"_id":"…", <sample body properties>}, …]}`.
    public static func body(ids: [String]) -> ByteBuffer {
        let properties = SampleBody.canonicalBytes.dropFirst()   // without the opening "{"
        var buffer = ByteBuffer()
        buffer.reserveCapacity(ids.count * (properties.count + 48) + 16)
        buffer.writeString(#"{"docs":["#)
        for (index, id) in ids.enumerated() {
            if index > 0 { buffer.writeString(",") }
            buffer.writeString(#"{"_id":""#)
            buffer.writeString(id)
            buffer.writeString(#"","#)
            buffer.writeBytes(properties)
        }
        buffer.writeString("]}")
        return buffer
    }

    /// Checks that every document of a `_bulk_docs` response was written.
    public static func check(_ response: KeepAliveHTTPClient.Response, count: Int) throws {
        guard response.status == .created else {
            throw BenchmarkFailure("_bulk_docs answered \(response.status): \(response.bodyString.prefix(300))")
        }
        guard let results = try JSON.parse(Array(response.body.readableBytesView)).arrayValue,
              results.count == count else {
            throw BenchmarkFailure("_bulk_docs response does not list \(count) results")
        }
        if let failed = results.first(where: { $0["error"] != nil }) {
            throw BenchmarkFailure("_bulk_docs rejected a document: \(failed)")
        }
    }
}
