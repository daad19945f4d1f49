import DocumentModel
import Foundation
import Testing
import TestSupport

/// docs/openapi.yaml describes every route the router serves (issue 37):
/// - every reserved path segment the router (`RESTHandler.swift`) matches on is a
///   segment of a documented path, so a new `case "_foo":` fails here until it is
///   documented;
/// - on a running node, every method a documented path does not list answers 405 on
///   the admin listener (so a method added to an existing route fails here);
/// - the paths and operations the document marks admin-only are refused (403, or 404
///   for the admin UI) on the public listener.
@Suite struct OpenAPIDocumentRouteTests {
    static let routerPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/RESTServer/RESTHandler.swift").path

    /// The methods probed on every path (HEAD is served wherever GET is).
    static let methods = ["GET", "HEAD", "PUT", "POST", "DELETE", "PATCH", "OPTIONS"]

    /// The string literals of the router that are whole reserved segments (`"_changes"`,
    /// `"_openapi.json"`), as it compares path segments with them.
    static func routerSegments() throws -> Set<String> {
        let source = try String(contentsOfFile: routerPath, encoding: .utf8)
        let literal = /"(_[A-Za-z][A-Za-z0-9_.]*)"/
        return Set(source.matches(of: literal).map { String($0.output.1) })
    }

    /// The documented paths with their operations' methods and listeners.
    struct Operation { let method: String; let listeners: [String] }

    static func documentedOperations(_ document: JSON) -> [String: [Operation]] {
        var result: [String: [Operation]] = [:]
        for (path, item) in document["paths"]?.objectValue ?? [:] {
            let pathListeners = item["x-shoal-listeners"]?.arrayValue?.compactMap(\.stringValue) ?? []
            for (key, operation) in item.objectValue ?? [:] where methods.contains(key.uppercased()) {
                let listeners = operation["x-shoal-listeners"]?.arrayValue?.compactMap(\.stringValue) ?? pathListeners
                result[path, default: []].append(Operation(method: key.uppercased(), listeners: listeners))
            }
        }
        return result
    }

    /// A concrete URL for a documented path: its parameters filled with things the node has.
    static func concrete(_ path: String) -> String {
        var url = path
        let values: [(String, String)] = [
            ("{db}", "db"), ("{keyspace}", "db"), ("{docid}", "doc1"), ("{attachment}", "a.txt"), ("{ddoc}", "dd"),
            ("{view}", "v"), ("{localid}", "l1"), ("{replid}", "r1"), ("{page}", "x"),
        ]
        for (name, value) in values { url = url.replacingOccurrences(of: name, with: value) }
        if path.hasPrefix("/{db}/_role/") { return url.replacingOccurrences(of: "{name}", with: "role1") }
        if path.hasPrefix("/{keyspace}/_index/") { return url.replacingOccurrences(of: "{name}", with: "by-n") }
        return url.replacingOccurrences(of: "{name}", with: "user1")
    }

    /// A node whose database has a document with an attachment, a design document with a
    /// view, a Mango index, a local document, a user and a role.
    static func seed(_ node: TestNode) async throws {
        let doc = try await node.request("PUT", "/db/doc1", json: ["n": 1], admin: true)
        try #require(doc.status == 201)
        let attachment = try await node.request(
            "PUT", "/db/doc1/a.txt?rev=\(doc.json["rev"]?.stringValue ?? "")", raw: Array("hi".utf8),
            headers: ["Content-Type": "text/plain"], admin: true)
        try #require(attachment.status == 201)
        let seeds: [(String, JSON)] = [
            ("/db/_design/dd", ["views": ["v": ["map": "function(doc) { emit(doc.n, null); }"]]]),
            ("/db/_local/l1", ["seq": 1]),
            ("/db/_user/user1", ["password": "pass"]),
            ("/db/_role/role1", ["admin_channels": ["b"]]),
        ]
        for (path, body) in seeds {
            let answer = try await node.request("PUT", path, json: body, admin: true)
            try #require(answer.status == 201, "\(path): \(answer)")
        }
        let index = try await node.request(
            "POST", "/db/_index", json: ["index": ["fields": ["n"]], "ddoc": "idx", "name": "by-n"], admin: true)
        try #require(index.status == 200, "\(index)")
    }

    @Test func everyRouterSegmentIsDocumented() async throws {
        let segments = try Self.routerSegments()
        // The scan finds the router's segments (a sanity check that it reads the right file).
        #expect(segments.isSuperset(of: ["_all_dbs", "_changes", "_bulk_docs", "_config", "_blipsync", "_openapi.json"]))
        try await withNode { node in
            let document = try await node.request("GET", "/_openapi.json", admin: true).json
            let documented = Set(Self.documentedOperations(document).keys.flatMap { $0.split(separator: "/").map(String.init) })
            let missing = segments.subtracting(documented).sorted()
            #expect(missing.isEmpty, "the router serves \(missing) but docs/openapi.yaml has no path with it")
        }
    }

    @Test func undocumentedMethodsAnswer405() async throws {
        try await withNode { node in
            try await Self.seed(node)
            let document = try await node.request("GET", "/_openapi.json", admin: true).json
            let operations = Self.documentedOperations(document)
            #expect(operations.count >= 50)
            for (path, listed) in operations.sorted(by: { $0.key < $1.key }) {
                var served = Set(listed.map(\.method))
                if served.contains("GET") { served.insert("HEAD") }
                for method in Self.methods where !served.contains(method) {
                    let answer = try await node.request(method, Self.concrete(path), admin: true)
                    #expect(
                        answer.status == 405,
                        "\(method) \(Self.concrete(path)) (\(path)) answered \(answer.status), but the document lists only \(served.sorted())")
                }
            }
        }
    }

    @Test func adminOnlyOperationsAreRefusedOnThePublicPort() async throws {
        try await withNode { node in
            try await Self.seed(node)
            let document = try await node.request("GET", "/_openapi.json", admin: true).json
            var checked = 0
            for (path, listed) in Self.documentedOperations(document).sorted(by: { $0.key < $1.key }) {
                for operation in listed {
                    #expect(!operation.listeners.isEmpty, "\(operation.method) \(path) has no x-shoal-listeners")
                    guard !operation.listeners.contains("public") else { continue }
                    let answer = try await node.request(operation.method, Self.concrete(path))
                    #expect(
                        [403, 404].contains(answer.status),
                        "\(operation.method) \(Self.concrete(path)) answered \(answer.status) on the public port, but the document says admin only")
                    checked += 1
                }
            }
            #expect(checked >= 30)
        }
    }
}
