import DocumentModel
import Query
import Testing

/// Design documents checked before they are stored.
@Suite struct DesignDocumentTests {
    @Test func goodViewsPass() throws {
        try DesignDocument.validate(id: "_design/a", body: [
            "views": ["v": ["map": "function(doc) { emit(doc._id, null); };", "reduce": "_count"]],
        ])
    }

    @Test func badJavaScriptIsACompilationError() {
        #expect {
            try DesignDocument.validate(id: "_design/a", body: ["views": ["v": ["map": "function(doc) { emit(; }"]]])
        } throws: { error in
            guard let error = error as? ViewError, case .compile(let view, let message) = error else { return false }
            return view == "v" && message.contains("SyntaxError")
        }
        #expect(throws: ViewError.invalidDesign("Unknown builtin reduce function: _median")) {
            try DesignDocument.validate(id: "_design/a", body: ["views": ["v": ["map": "function(doc) {}", "reduce": "_median"]]])
        }
    }
}
