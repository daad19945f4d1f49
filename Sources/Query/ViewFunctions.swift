import DocumentModel
import Foundation
import JSEngine
import Logging

/// The compiled JavaScript of one view: its map function (with `emit`) and its reduce.
///
/// `ViewFunctions` owns the Duktape heaps of a view (each on its own thread, so a runaway
/// map never runs on a thread that serves writes or other queries): the map function is
/// compiled into `mapHeaps` heaps (two on a machine with two or more cores) so that an
/// index build maps two batches at once, as CouchDB runs several JavaScript processes)
/// and the helpers CouchDB gives view code: `emit(key, value)`, `log(…)`, `sum(array)`,
/// `isArray(v)`, `toJSON(v)`. `emit` collects rows inside the heap and a map call returns
/// them all at once (one JSON text per document, no host call per row). Functions run under
/// `timeout` per document; one that overruns wedges this `ViewFunctions` for good (every
/// later call fails at once).
public final class ViewFunctions: Sendable {
    let maps: [JSFunction]
    public let reduce: ReduceFunction?

    /// Heaps a view's map function is compiled into by default: batches mapped at once.
    public static let defaultMapHeaps = min(2, max(1, ProcessInfo.processInfo.activeProcessorCount))

    /// How many batches can be mapped at once (one per heap).
    public var mapHeaps: Int { maps.count }

    /// Compiles `definition`. Throws `ViewError.compile` with the engine's message.
    public init(
        _ definition: ViewDefinition, viewName: String, timeout: Duration = .seconds(2), mapHeaps: Int = defaultMapHeaps,
        logger: Logger? = nil
    ) throws(ViewError) {
        let options = JSFunction.Options(timeout: timeout, filename: "view \(viewName)")
        let log: HostFunction = { arguments, _ in
            logger?.info("view \(viewName) log: \(arguments.map(\.canonicalString).joined(separator: " "))")
            return nil
        }
        do {
            var maps: [JSFunction] = []
            for _ in 0..<max(1, mapHeaps) {
                maps.append(try JSFunction(source: Self.wrappedMap(definition.map), globals: ["log": log], options: options))
            }
            self.maps = maps
        } catch {
            throw .compile(view: viewName, message: error.message)
        }
        if let source = definition.reduce {
            reduce = try Self.reduceFunction(source, viewName: viewName, log: log, options: options)
        } else {
            reduce = nil
        }
    }

    private static func reduceFunction(
        _ source: String, viewName: String, log: @escaping HostFunction, options: JSFunction.Options
    ) throws(ViewError) -> ReduceFunction {
        if let builtin = ReduceFunction.Builtin(rawValue: source) { return .builtin(builtin) }
        if source.hasPrefix("_") { throw .invalidDesign("Unknown builtin reduce function: \(source)") }
        do {
            return .javascript(try JSFunction(source: wrapped(source), globals: ["log": log], options: options))
        } catch {
            throw .compile(view: viewName, message: error.message)
        }
    }

    /// Compiles a view's functions and throws them away (design-document validation).
    static func compileCheck(_ definition: ViewDefinition, viewName: String) throws(ViewError) {
        _ = try ViewFunctions(definition, viewName: viewName, timeout: .seconds(2), mapHeaps: 1)
    }

    /// True once a function overran its budget: the index cannot be built any more.
    public var isWedged: Bool {
        if maps.contains(where: \.isWedged) { return true }
        if case .javascript(let function)? = reduce { return function.isWedged }
        return false
    }

    /// Maps documents: one result per document, the `(key, value)` pairs it emitted in
    /// order, or the error it threw (that document is skipped). A timeout throws.
    public func map(_ documents: [[String: JSON]]) async throws(JSError) -> [Result<[(key: JSON, value: JSON)], JSError>] {
        try await map(texts: documents.map { JSON.array([.object($0)]).canonicalBytes() })
    }

    /// `map(_:)` with each document given as the JSON text of a one-element array holding
    /// it (`[{"_id":…}]`), as the index builds it from stored text, on heap `heap` (modulo
    /// `mapHeaps`): calls on different heaps run at once.
    public func map(texts: [[UInt8]], heap: Int = 0) async throws(JSError) -> [Result<[(key: JSON, value: JSON)], JSError>] {
        try await maps[heap % maps.count].call(jsonBatch: texts).map { result in
            result.map { emitted in
                guard case .array(let rows) = emitted else { return [] }
                return rows.map { row in
                    guard case .array(let pair) = row, pair.count == 2 else { return (key: JSON.null, value: JSON.null) }
                    return (key: pair[0], value: pair[1])
                }
            }
        }
    }

    /// A map function in CouchDB's helpers, with an `emit` that collects `[key, value]`
    /// pairs; the compiled function maps one document and returns its pairs.
    static func wrappedMap(_ source: String) -> String {
        "(function(){var __rows=[];var emit=function(k,v){__rows.push([k,v]);};var __map=" + wrapped(source)
            + ";return function(doc){__rows=[];__map(doc);var r=__rows;__rows=[];return r;};})()"
    }

    /// CouchDB's helpers, then the user's function, all on the source's first line so
    /// the engine's line numbers stay those of the user's source.
    static func wrapped(_ source: String) -> String {
        var body = Substring(source)
        while let last = body.last, last == ";" || last.isWhitespace { body.removeLast() }
        return "(function(){var sum=function(a){var s=0;for(var i=0;i<a.length;i++){s+=a[i];}return s;};"
            + "var isArray=Array.isArray;var toJSON=function(v){return JSON.stringify(v);};"
            + "var __f=(\(body)\n);if(typeof __f!=='function'){throw new SyntaxError('the source does not evaluate to a function');}"
            + "return __f;})()"
    }
}
