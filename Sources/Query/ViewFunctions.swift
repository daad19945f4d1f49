import DocumentModel
import JSEngine
import Logging
import Synchronization

/// The compiled JavaScript of one view: its map function (with `emit`) and its reduce.
///
/// `ViewFunctions` owns the Duktape heaps of a view (one per function, each on its own
/// thread, so a runaway map never runs on a thread that serves writes or other queries)
/// and the helpers CouchDB gives view code: `emit(key, value)`, `log(…)`, `sum(array)`,
/// `isArray(v)`, `toJSON(v)`. Functions run under `timeout` per document; one that
/// overruns wedges this `ViewFunctions` for good (every later call fails at once).
public final class ViewFunctions: Sendable {
    let map: JSFunction
    public let reduce: ReduceFunction?

    /// Compiles `definition`. Throws `ViewError.compile` with the engine's message.
    public init(_ definition: ViewDefinition, viewName: String, timeout: Duration = .seconds(2), logger: Logger? = nil) throws(ViewError) {
        let options = JSFunction.Options(timeout: timeout, filename: "view \(viewName)")
        let log: HostFunction = { arguments, _ in
            logger?.info("view \(viewName) log: \(arguments.map(\.canonicalString).joined(separator: " "))")
            return nil
        }
        do {
            map = try JSFunction(
                source: Self.wrapped(definition.map),
                globals: ["emit": Self.emit, "log": log],
                options: options)
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
        _ = try ViewFunctions(definition, viewName: viewName, timeout: .seconds(2))
    }

    /// True once a function overran its budget: the index cannot be built any more.
    public var isWedged: Bool {
        if map.isWedged { return true }
        if case .javascript(let function)? = reduce { return function.isWedged }
        return false
    }

    /// Maps documents: one result per document, the `(key, value)` pairs it emitted in
    /// order, or the error it threw (that document is skipped). A timeout throws.
    public func map(_ documents: [[String: JSON]]) async throws(JSError) -> [Result<[(key: JSON, value: JSON)], JSError>] {
        let sinks = documents.map { _ in EmitSink() }
        let batch = zip(documents, sinks).map { (arguments: [JSON.object($0.0)], context: $0.1 as (any Sendable)?) }
        let results = try await map.call(batch: batch)
        return zip(results, sinks).map { result, sink in
            result.map { _ in sink.rows }
        }
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

    private static let emit: HostFunction = { arguments, context in
        guard let sink = context as? EmitSink else { return nil }
        sink.append(key: arguments.first ?? .null, value: arguments.count > 1 ? arguments[1] : .null)
        return nil
    }
}

/// Collects one map call's `emit`s. Written only by the worker thread during the call and
/// read by the caller after it, under a lock.
final class EmitSink: Sendable {
    private let state = Mutex<[(key: JSON, value: JSON)]>([])

    func append(key: JSON, value: JSON) { state.withLock { $0.append((key, value)) } }

    var rows: [(key: JSON, value: JSON)] { state.withLock { $0 } }
}
