import DocumentModel
import Query
import Testing

/// Parameter parsing and CouchDB's cross-checks, with CouchDB's messages.
@Suite struct ViewQueryTests {
    private func parseError(_ query: [String: String], body: [String: JSON] = [:], reduces: Bool = false) -> String? {
        do {
            let parsed = try ViewQuery.parse(query: query, body: body)
            try parsed.validate(viewReduces: reduces)
            return nil
        } catch {
            #expect(error.error == "query_parse_error")
            #expect(error.httpStatus == 400)
            return error.reason
        }
    }

    @Test func parsesEveryParameter() throws {
        let query = try ViewQuery.parse(query: [
            "startkey": #"["a",1]"#, "end_key": #""z""#, "startkey_docid": "d1", "endkey_docid": "d9",
            "inclusive_end": "false", "descending": "false", "limit": "10", "skip": "2", "include_docs": "true",
            "conflicts": "true", "reduce": "false", "group_level": "2", "update_seq": "true", "stale": "update_after",
        ])
        #expect(query.startKey == ["a", 1])
        #expect(query.endKey == "z")
        #expect(query.startKeyDocID == "d1" && query.endKeyDocID == "d9")
        #expect(!query.inclusiveEnd && !query.descending)
        #expect(query.limit == 10 && query.skip == 2)
        #expect(query.includeDocs && query.conflicts && query.updateSeq)
        #expect(query.reduce == false && query.groupLevel == 2)
        #expect(query.update == .lazy)
    }

    @Test func keyAndBodyKeys() throws {
        let single = try ViewQuery.parse(query: ["key": "1"])
        #expect(single.startKey == 1 && single.endKey == 1)
        let posted = try ViewQuery.parse(query: [:], body: ["keys": ["a", ["b"]], "group": true, "limit": 3])
        #expect(posted.keys == ["a", ["b"]])
        #expect(posted.group && posted.limit == 3)
    }

    @Test func couchDBMessages() {
        #expect(parseError(["limit": "-1"]) == #"Invalid value for positive integer: "-1""#)
        #expect(parseError(["skip": "x"]) == #"Invalid value for integer: "x""#)
        #expect(parseError(["descending": "yes"]) == #"Invalid boolean parameter: "yes""#)
        #expect(parseError(["stale": "never"]) == "Invalid value for `stale`.")
        #expect(parseError(["update": "sometimes"]) == "Invalid value for `update`.")
        #expect(parseError(["count": "1"]) == "QS param `count` is not `limit`")
        #expect(parseError(["startkey": "not json"]) == "Invalid JSON value for `startkey`: not json")
        #expect(parseError([:], body: ["keys": "a"]) == "`keys` member must be an array.")
        #expect(parseError(["key": "1"], body: ["keys": [1]]) == "`keys` is incompatible with `key`, `start_key` and `end_key`")
        #expect(parseError(["startkey": #""b""#, "endkey": #""a""#])
            == "No rows can match your key range, reverse your start_key and end_key or set descending=true")
        #expect(parseError(["startkey": #""a""#, "endkey": #""b""#, "descending": "true"])
            == "No rows can match your key range, reverse your start_key and end_key or set descending=false")
        #expect(parseError(["group": "true"]) == "Invalid use of grouping on a map view.")
        #expect(parseError(["reduce": "true"]) == "Reduce is invalid for map-only views.")
        #expect(parseError(["include_docs": "true"], reduces: true) == "`include_docs` is invalid for reduce")
        #expect(parseError([:], body: ["keys": [1]], reduces: true) == "Multi-key fetches for reduce views must use `group=true`")
        #expect(parseError(["include_docs": "true", "reduce": "false"], reduces: true) == nil)
        #expect(parseError(["startkey": #""a""#, "endkey": #""a""#]) == nil)
    }
}
