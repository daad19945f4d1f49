import DocumentModel
import Foundation
import Testing
import TestSupport

/// `GET /_openapi.json` on the admin listener serves docs/openapi.yaml as JSON (the
/// generated `OpenAPIDocument`), and the two list the same paths.
@Suite struct OpenAPIDocumentTests {
    static let yamlPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml").path

    /// The paths of the YAML document: the keys indented by two spaces under `paths:`.
    static func yamlPaths() throws -> Set<String> {
        let text = try String(contentsOfFile: yamlPath, encoding: .utf8)
        var inPaths = false
        var paths: Set<String> = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") && !line.isEmpty { inPaths = line == "paths:" }
            if inPaths, line.hasPrefix("  /"), !line.hasPrefix("   "), line.hasSuffix(":") {
                paths.insert(String(line.dropFirst(2).dropLast()))
            }
        }
        return paths
    }

    @Test func adminServesTheDocument() async throws {
        try await withNode { node in
            let answer = try await node.request("GET", "/_openapi.json", admin: true)
            #expect(answer.status == 200)
            #expect(answer.headers["content-type"] == "application/json")
            let document = answer.json
            #expect(document["openapi"]?.stringValue == "3.0.3")
            let served = Set(document["paths"]?.objectValue?.keys.map { $0 } ?? [])
            #expect(served == (try Self.yamlPaths()), "regenerate with scripts/api-fuzz --generate")
            #expect(served.contains("/{keyspace}/{docid}"))
            #expect(served.count >= 50)
        }
    }

    @Test func publicPortRefuses() async throws {
        try await withNode { node in
            let answer = try await node.request("GET", "/_openapi.json")
            answer.expectError(403, "forbidden")
        }
    }
}
