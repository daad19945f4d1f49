import Testing
import TestSupport

extension HTTPResult {
    /// Expects a CouchDB/Sync Gateway error answer (and its reason, when given).
    func expectError(_ status: Int, _ error: String, reason: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(self.status == status, "\(self)", sourceLocation: sourceLocation)
        #expect(json["error"]?.stringValue == error, "\(self)", sourceLocation: sourceLocation)
        if let reason {
            #expect(json["reason"]?.stringValue == reason, "\(self)", sourceLocation: sourceLocation)
        } else {
            #expect(json["reason"]?.stringValue?.isEmpty == false, "\(self)", sourceLocation: sourceLocation)
        }
    }

    func expectStatus(_ status: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(self.status == status, "\(self)", sourceLocation: sourceLocation)
    }

    var rev: String? { json["rev"]?.stringValue ?? json["_rev"]?.stringValue }
}
