import DocumentModel
import Testing
import TestSupport

/// Runs `body` against a fresh in-memory node and stops it afterwards.
func withNode(
    maxDocumentSize: Int? = nil, conflicts: ConflictPolicy? = nil, _ body: (TestNode) async throws -> Void
) async throws {
    let node = try await TestNode.start(maxDocumentSize: maxDocumentSize, conflicts: conflicts)
    do {
        try await body(node)
    } catch {
        await node.stop()
        throw error
    }
    await node.stop()
}

extension HTTPResult {
    /// Asserts a CouchDB error answer.
    func expectError(_ status: Int, _ error: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(self.status == status, "\(self)", sourceLocation: sourceLocation)
        #expect(json["error"]?.stringValue == error, "\(self)", sourceLocation: sourceLocation)
        #expect(json["reason"]?.stringValue?.isEmpty == false, "\(self)", sourceLocation: sourceLocation)
    }

    var rev: String? { json["rev"]?.stringValue ?? json["_rev"]?.stringValue }
}
