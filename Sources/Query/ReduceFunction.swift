import DocumentModel
import JSEngine

/// A view's reduce: a CouchDB builtin (computed in Swift) or a JavaScript
/// `function(keys, values, rereduce)`.
///
/// `ReduceFunction` owns the two passes CouchDB defines: `reduce` over rows (`keys` are
/// `[key, docID]` pairs) and `rereduce` over partial results; and `finalize`, which turns a
/// stored partial into the value a client sees (only `_approx_count_distinct` keeps a
/// different partial: its HyperLogLog registers). Stored partials are always rereducible.
public enum ReduceFunction: Sendable {
    case builtin(Builtin)
    case javascript(JSFunction)

    /// CouchDB's builtin reduce functions.
    public enum Builtin: String, Sendable, CaseIterable {
        case count = "_count"
        case sum = "_sum"
        case stats = "_stats"
        case approxCountDistinct = "_approx_count_distinct"
    }

    /// First pass over rows. A JavaScript failure throws; a builtin's bad input gives
    /// CouchDB's `builtin_reduce_error` object as the value.
    public func reduce(keys: [(key: JSON, id: String)], values: [JSON]) async throws(JSError) -> JSON {
        switch self {
        case .builtin(let builtin):
            return builtin.reduce(keys: keys.map(\.key), values: values)
        case .javascript(let function):
            let keyPairs = JSON.array(keys.map { .array([$0.key, .string($0.id)]) })
            return try await function.call([keyPairs, .array(values), false])
        }
    }

    /// Second pass over partial results.
    public func rereduce(_ partials: [JSON]) async throws(JSError) -> JSON {
        switch self {
        case .builtin(let builtin):
            return builtin.rereduce(partials)
        case .javascript(let function):
            if partials.count == 1 { return partials[0] }
            return try await function.call([.null, .array(partials), true])
        }
    }

    /// Many groups at once (one trip to the JavaScript thread): each group's rows reduced.
    func reduce(groups: [[(key: JSON, id: String, value: JSON)]]) async throws(JSError) -> [JSON] {
        switch self {
        case .builtin(let builtin):
            return groups.map { rows in builtin.reduce(keys: rows.map(\.key), values: rows.map(\.value)) }
        case .javascript(let function):
            let batch = groups.map { rows -> (arguments: [JSON], context: (any Sendable)?) in
                ([.array(rows.map { .array([$0.key, .string($0.id)]) }), .array(rows.map(\.value)), false], nil)
            }
            return try await function.call(batch: batch).map(Self.value)
        }
    }

    /// Many rereductions at once.
    func rereduce(groups: [[JSON]]) async throws(JSError) -> [JSON] {
        switch self {
        case .builtin(let builtin):
            return groups.map(builtin.rereduce)
        case .javascript(let function):
            let batch = groups.map { partials -> (arguments: [JSON], context: (any Sendable)?) in
                ([.null, .array(partials), true], nil)
            }
            return try await function.call(batch: batch).map(Self.value)
        }
    }

    /// The value a client sees for a stored partial.
    public func finalize(_ partial: JSON) -> JSON {
        if case .builtin(.approxCountDistinct) = self { return Builtin.estimate(partial) }
        return partial
    }

    /// A JavaScript reduce that threw for one group gives CouchDB's error object as value.
    private static func value(_ result: Result<JSON, JSError>) -> JSON {
        switch result {
        case .success(let value): return value
        case .failure(let error): return ["error": "reduce_error", "reason": .string(error.message)]
        }
    }
}
