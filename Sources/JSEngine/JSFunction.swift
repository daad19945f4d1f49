import DocumentModel
import Dispatch

/// A native function that scripts can call as a global, e.g. `channel("a", "b")`.
///
/// It receives the call's arguments as JSON (`undefined` and functions inside them become
/// `null`) and the context given to `JSFunction.call`. It returns the value the script sees
/// (`nil` = `undefined`), or throws: `JSError.thrown(v)` makes the script see `throw v`
/// (e.g. `{forbidden: "..."}`); any other error becomes `throw new Error(String(describing:))`.
/// It runs on the function's worker thread while the caller waits; it must not block for
/// long, and must not call the same `JSFunction` (that throws `.reentrantCall`).
public typealias HostFunction = @Sendable (_ arguments: [JSON], _ context: (any Sendable)?) throws -> JSON?

/// One compiled JavaScript (ES5) function, e.g. a Sync Gateway sync function or a `js`
/// conflict resolver, with its own Duktape heap and its own thread.
///
/// `JSFunction` owns the heap (through its `JSWorker`) for its whole life: one heap per
/// function, so scripts never share state; calls from any number of threads or tasks are
/// serialized. Each call runs on the function's dedicated thread under a time budget
/// (`Options.timeout`). Duktape cannot interrupt a script, so a call that overruns makes
/// the caller get `JSError.timeout` at once and leaves the function *wedged*: the stuck
/// thread is abandoned (it keeps its heap and stack, at idle CPU priority) and every later
/// call fails immediately with `JSError.wedged`. Replace a wedged function with a new one.
/// Deinit stops the thread and destroys the heap, unless the function is wedged.
///
/// Globals set by a script persist from one call to the next, as in Sync Gateway.
public final class JSFunction: Sendable {
    /// Limits and naming for one function.
    public struct Options: Sendable {
        /// The longest a single call (or compilation) may run. Default 2 s.
        public var timeout: Duration
        /// Bytes the heap may allocate; past it, allocations fail inside the script
        /// (`RangeError: alloc failed`). Default 64 MiB; 0 means no limit.
        public var memoryLimit: Int
        /// The file name Duktape puts in error messages and stack traces.
        public var filename: String

        public init(timeout: Duration = .seconds(2), memoryLimit: Int = 64 << 20, filename: String = "function.js") {
            self.timeout = timeout
            self.memoryLimit = memoryLimit
            self.filename = filename
        }
    }

    /// The options the function was created with.
    public let options: Options
    private let worker: JSWorker
    private let budget: UInt64
    private let asyncQueue = DispatchQueue(label: "shoal.jsengine.call")

    /// Compiles `source`, a function expression such as `function(doc, oldDoc) { ... }`
    /// (any expression that evaluates to a function works), in a new heap where each entry
    /// of `globals` is a host function; a name may be `"name"` or `"object.name"`
    /// (e.g. `"console.log"`).
    ///
    /// Throws `JSError.compile` with Duktape's message and the line in `source`,
    /// `JSError.timeout` if evaluating the source overran the budget.
    public init(source: String, globals: [String: HostFunction] = [:], options: Options = Options()) throws(JSError) {
        for name in globals.keys {
            precondition(Self.isValidGlobalName(name), "invalid host function name \(name)")
        }
        precondition(globals.count < 32_768, "too many host functions")
        self.options = options
        let components = options.timeout.components
        let nanos = Double(components.seconds) * 1e9 + Double(components.attoseconds) / 1e9
        budget = UInt64(min(max(nanos, 1), Double(UInt64.max / 2)))
        let hosts = globals.sorted { $0.key < $1.key }.map { (name: $0.key, function: $0.value) }
        let heap = try DuktapeHeap(memoryLimit: max(options.memoryLimit, 0), hosts: hosts)
        worker = try JSWorker(heap: heap)
        let filename = options.filename
        let result = try worker.run(budget: budget) { heap in
            Result { () throws(JSError) in try heap.compile(source: source, filename: filename) }
        }
        try result.get()
    }

    deinit {
        worker.shutdown()
    }

    /// True once a call has timed out: every later call throws `JSError.wedged`.
    public var isWedged: Bool { worker.isWedged }

    /// Heaps alive in this process, including those of wedged functions (which never die).
    public static var liveHeapCount: Int { DuktapeHeap.live.load(ordering: .relaxed) }

    /// Calls the function with `arguments` and returns its result (`undefined` → `.null`).
    ///
    /// Blocks the calling thread until the call ends, waiting first for calls already under
    /// way. `context` is handed to every host function the script calls during this call.
    /// Throws `.thrown` for an exception, `.timeout` / `.wedged` for a runaway script.
    public func call(_ arguments: [JSON], context: (any Sendable)? = nil) throws(JSError) -> JSON {
        let encoded = DuktapeText.input(.array(arguments))
        return try worker.run(budget: budget) { heap in
            heap.call(arguments: encoded, context: context)
        }.get()
    }

    /// `call(_:context:)` for async code: the waiting happens on this function's serial
    /// dispatch queue, not on a Swift concurrency thread.
    public func call(_ arguments: [JSON], context: (any Sendable)? = nil) async throws(JSError) -> JSON {
        let result: Result<JSON, JSError> = await withCheckedContinuation { continuation in
            asyncQueue.async {
                continuation.resume(returning: Result { () throws(JSError) in
                    try self.call(arguments, context: context)
                })
            }
        }
        return try result.get()
    }

    /// Calls the function once per element of `batch`, in order, in one trip to the worker
    /// thread (cheaper than separate calls). The time budget applies to each call. A script
    /// exception fails only its own element; a timeout fails the whole batch.
    public func call(batch: [(arguments: [JSON], context: (any Sendable)?)]) throws(JSError) -> [Result<JSON, JSError>] {
        try call(encoded: batch.map { (DuktapeText.input(.array($0.arguments)), $0.context) })
    }

    /// `call(batch:)` with each call's arguments given as the UTF-8 JSON text of their array
    /// (e.g. `[{"a":1}]`), for callers that hold stored JSON text and need not decode it
    /// first. The text must be valid JSON; object keys reach the script in the text's order.
    public func call(jsonBatch: [[UInt8]]) async throws(JSError) -> [Result<JSON, JSError>] {
        let result: Result<[Result<JSON, JSError>], JSError> = await withCheckedContinuation { continuation in
            asyncQueue.async {
                continuation.resume(returning: Result { () throws(JSError) in
                    try self.call(encoded: jsonBatch.map { (DuktapeText.cesu8($0), nil) })
                })
            }
        }
        return try result.get()
    }

    private func call(encoded: [([UInt8], (any Sendable)?)]) throws(JSError) -> [Result<JSON, JSError>] {
        let worker = self.worker
        return try worker.run(budget: budget) { heap in
            var results = [Result<JSON, JSError>]()
            results.reserveCapacity(encoded.count)
            for (index, item) in encoded.enumerated() {
                if index > 0 { worker.heartbeat() }
                results.append(heap.call(arguments: item.0, context: item.1))
            }
            return results
        }
    }

    /// `call(batch:)` for async code (waits on this function's serial dispatch queue).
    public func call(batch: [(arguments: [JSON], context: (any Sendable)?)]) async throws(JSError) -> [Result<JSON, JSError>] {
        let result: Result<[Result<JSON, JSError>], JSError> = await withCheckedContinuation { continuation in
            asyncQueue.async {
                continuation.resume(returning: Result { () throws(JSError) in try self.call(batch: batch) })
            }
        }
        return try result.get()
    }

    private static func isValidGlobalName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2 else { return false }
        return parts.allSatisfy { part in
            guard let first = part.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
            return part.unicodeScalars.allSatisfy { $0 == "_" || $0 == "$" || $0.properties.isAlphabetic || ("0"..."9").contains($0) }
        }
    }
}
