import CDuktape
import DocumentModel
import Synchronization

/// Decides whether a host function may run now (the call it belongs to has not timed out)
/// and marks when it returns. Implemented by `JSWorker`.
protocol HostCallGate: AnyObject {
    func enterHost() -> Bool
    func leaveHost()
}

/// Owns one Duktape heap (`duk_context`), its allocator state, the compiled function and the
/// host functions bound to it.
///
/// Not thread-safe: after `init`, only its `JSWorker`'s thread touches it. Every Duktape call
/// that can throw happens in a C helper of `CDuktape` inside `duk_safe_call`, so no longjmp
/// ever crosses a Swift frame. Values cross as JSON text in both directions: canonical JSON in
/// (object keys sorted by UTF-8 bytes, so every node's script sees the same key order),
/// `duk_json_encode` out, parsed with Shoal's parser.
final class DuktapeHeap {
    /// Heaps created and not yet destroyed, in this process (abandoned heaps stay counted).
    static let live = Atomic<Int>(0)

    private var context: OpaquePointer?
    let state: UnsafeMutablePointer<shoal_duk_heap_state>
    private let binding = UnsafeMutablePointer<shoal_duk_host_binding>.allocate(capacity: 1)
    private let hosts: [HostFunction]
    private weak var gate: HostCallGate?
    /// The value handed to host functions during the current call.
    private var callContext: (any Sendable)?
    /// Storage for the JSON text a host function returns (read by C before the next dispatch).
    private var hostOutput = UnsafeMutableBufferPointer<CChar>.allocate(capacity: 256)

    /// Creates the heap and defines `hosts` as globals (`name` or `object.name`).
    init(memoryLimit: Int, hosts: [(name: String, function: HostFunction)]) throws(JSError) {
        var statePointer: UnsafeMutablePointer<shoal_duk_heap_state>?
        guard let ctx = shoal_duk_create_heap(memoryLimit, &statePointer), let statePointer else {
            binding.deallocate()
            hostOutput.deallocate()
            throw JSError.engineUnavailable("duk_create_heap failed")
        }
        context = ctx
        state = statePointer
        self.hosts = hosts.map(\.function)
        Self.live.add(1, ordering: .relaxed)
        binding.initialize(to: shoal_duk_host_binding(
            dispatch: { udata, index, args, argsCount, out, outCount in
                let heap = Unmanaged<DuktapeHeap>.fromOpaque(udata!).takeUnretainedValue()
                return heap.dispatch(index: Int(index), args: args!, count: argsCount, out: out!, outCount: outCount!)
            },
            udata: Unmanaged.passUnretained(self).toOpaque()
        ))
        try check(shoal_duk_bind_host(ctx, binding))
        for (index, host) in hosts.enumerated() {
            let parts = host.name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let object = parts.count == 2 ? parts[0] : nil
            let name = parts[parts.count - 1]
            try check(shoal_duk_define_host(ctx, object, name, Int32(index)))
        }
    }

    deinit {
        destroy()
        binding.deallocate()
        hostOutput.deallocate()
    }

    /// Frees the Duktape heap. Later calls fail; calling it again does nothing.
    func destroy() {
        guard let ctx = context else { return }
        context = nil
        shoal_duk_destroy_heap(ctx, state)
        Self.live.subtract(1, ordering: .relaxed)
    }

    /// Sets who decides whether host functions may still run (the worker that owns this heap).
    func setGate(_ gate: HostCallGate) {
        self.gate = gate
    }

    /// Compiles `source`, a function expression, keeping the function for `call`.
    func compile(source: String, filename: String) throws(JSError) {
        guard let ctx = context else { throw JSError.engineUnavailable("the heap is destroyed") }
        // Parentheses make `function(doc) {...}` an expression; the newline keeps a trailing
        // `// comment` from swallowing the closing parenthesis. Line numbers are unchanged.
        var wrapped = "(" + source + "\n)"
        let status = wrapped.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                shoal_duk_compile(ctx, chars.baseAddress, chars.count, filename)
            }
        }
        defer { shoal_duk_reset(ctx) }
        switch status {
        case SHOAL_DUK_OK:
            if case .bool(true) = try topJSON(ctx) { return }
            throw JSError.compile(message: "the source does not evaluate to a function", line: nil)
        case SHOAL_DUK_THROWN:
            let error = JSError.thrown(try topJSON(ctx))
            let lines = source.utf8.reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            var line: Int?
            if case .object(let object) = error.thrownValue, case .int(let n)? = object["lineNumber"] {
                line = min(max(Int(n), 1), lines)
            }
            throw JSError.compile(message: error.message, line: line)
        default:
            throw JSError.compile(message: topString(ctx), line: nil)
        }
    }

    /// Calls the compiled function with `arguments`: JSON text of an array, in CESU-8
    /// (`DuktapeText.input(_:)`).
    func call(arguments: [UInt8], context callContext: (any Sendable)?) -> Result<JSON, JSError> {
        guard let ctx = context else { return .failure(.engineUnavailable("the heap is destroyed")) }
        self.callContext = callContext
        defer {
            self.callContext = nil
            shoal_duk_reset(ctx)
        }
        let status = arguments.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                shoal_duk_call(ctx, chars.baseAddress, chars.count)
            }
        }
        switch status {
        case SHOAL_DUK_OK:
            return Result { () throws(JSError) -> JSON in try topJSON(ctx) }
        case SHOAL_DUK_THROWN:
            return Result { () throws(JSError) -> JSON in try topJSON(ctx) }.flatMap { .failure(.thrown($0)) }
        default:
            return .failure(.thrown(.string(topString(ctx))))
        }
    }

    // MARK: - Reading results

    private func check(_ status: Int32) throws(JSError) {
        guard status != SHOAL_DUK_OK, let ctx = context else { return }
        defer { shoal_duk_reset(ctx) }
        throw JSError.engineUnavailable(topString(ctx))
    }

    private func topJSON(_ ctx: OpaquePointer) throws(JSError) -> JSON {
        var count = 0
        guard let pointer = duk_get_lstring(ctx, -1, &count) else { return .null }
        return try DuktapeText.json(pointer, count: count)
    }

    private func topString(_ ctx: OpaquePointer) -> String {
        var count = 0
        guard let pointer = duk_get_lstring(ctx, -1, &count) else { return "unknown error" }
        return DuktapeText.string(pointer, count: count)
    }

    // MARK: - Host functions

    /// Runs host function `index` for the C trampoline. Never calls Duktape.
    private func dispatch(
        index: Int,
        args: UnsafePointer<CChar>,
        count: Int,
        out: UnsafeMutablePointer<UnsafePointer<CChar>?>,
        outCount: UnsafeMutablePointer<Int>
    ) -> Int32 {
        out.pointee = nil
        outCount.pointee = 0
        guard gate?.enterHost() ?? true else {
            return output(Array("the JavaScript function timed out".utf8), status: SHOAL_HOST_THROW_ERROR, out, outCount)
        }
        defer { gate?.leaveHost() }
        let arguments: [JSON]
        do {
            guard case .array(let list) = try DuktapeText.json(args, count: count) else { return SHOAL_HOST_RETURN }
            arguments = list
        } catch {
            return output(Array(error.message.utf8), status: SHOAL_HOST_THROW_ERROR, out, outCount)
        }
        do {
            guard let result = try hosts[index](arguments, callContext) else { return SHOAL_HOST_RETURN }
            return output(result.canonicalBytes(), status: SHOAL_HOST_RETURN, out, outCount)
        } catch let error as JSError {
            if case .thrown(let value) = error {
                return output(value.canonicalBytes(), status: SHOAL_HOST_THROW_VALUE, out, outCount)
            }
            return output(Array(error.message.utf8), status: SHOAL_HOST_THROW_ERROR, out, outCount)
        } catch {
            return output(Array(String(describing: error).utf8), status: SHOAL_HOST_THROW_ERROR, out, outCount)
        }
    }

    private func output(
        _ bytes: [UInt8],
        status: Int32,
        _ out: UnsafeMutablePointer<UnsafePointer<CChar>?>,
        _ outCount: UnsafeMutablePointer<Int>
    ) -> Int32 {
        let bytes = DuktapeText.cesu8(bytes)
        if hostOutput.count < bytes.count {
            hostOutput.deallocate()
            hostOutput = .allocate(capacity: max(bytes.count, hostOutput.count * 2))
        }
        bytes.withUnsafeBytes { raw in
            UnsafeMutableRawBufferPointer(hostOutput).copyMemory(from: raw)
        }
        out.pointee = UnsafePointer(hostOutput.baseAddress)
        outCount.pointee = bytes.count
        return status
    }
}
