import DocumentModel
import Query
import Testing

/// CouchDB's builtin reduce functions, first pass and rereduce.
@Suite struct ReduceBuiltinTests {
    private func reduce(_ builtin: ReduceFunction.Builtin, keys: [JSON]? = nil, _ values: [JSON]) async throws -> JSON {
        let function = ReduceFunction.builtin(builtin)
        let rowKeys = (keys ?? values.map { _ in JSON.null }).enumerated().map { (key: $1, id: "d\($0)") }
        return function.finalize(try await function.reduce(keys: rowKeys, values: values))
    }

    @Test func count() async throws {
        #expect(try await reduce(.count, [1, "x", .null]) == 3)
        #expect(try await ReduceFunction.builtin(.count).rereduce([3, 4]) == 7)
    }

    @Test func sumOfNumbersAndArrays() async throws {
        #expect(try await reduce(.sum, [1, 2, 3.5]) == 6.5)
        #expect(try await reduce(.sum, [[1, 2], [3], [1, 1, 1]]) == [5, 3, 1])
        #expect(try await ReduceFunction.builtin(.sum).rereduce([[1, 2], 4]) == [5, 2])
        let bad = try await reduce(.sum, [1, "x"])
        #expect(bad.objectValue?["error"] == "builtin_reduce_error")
    }

    @Test func stats() async throws {
        let value = try await reduce(.stats, [2, 4, 6])
        #expect(value == ["sum": 12, "count": 3, "min": 2, "max": 6, "sumsqr": 56])
        let merged = try await ReduceFunction.builtin(.stats).rereduce([value, ["sum": 1, "count": 1, "min": 1, "max": 1, "sumsqr": 1]])
        #expect(merged == ["sum": 13, "count": 4, "min": 1, "max": 6, "sumsqr": 57])
    }

    @Test func approxCountDistinct() async throws {
        let keys: [JSON] = (0..<1000).map { .string("k\($0 % 250)") }
        let estimate = try await reduce(.approxCountDistinct, keys: keys, keys.map { _ in .null })
        let n = try #require(estimate.intValue)
        #expect(abs(n - 250) <= 20, "estimate \(n)")
        // Rereduce merges registers: the halves' union counts each key once.
        let function = ReduceFunction.builtin(.approxCountDistinct)
        let a = try await function.reduce(keys: keys.prefix(500).map { (key: $0, id: "x") }, values: [])
        let b = try await function.reduce(keys: keys.suffix(500).map { (key: $0, id: "x") }, values: [])
        #expect(function.finalize(try await function.rereduce([a, b])) == estimate)
    }
}
