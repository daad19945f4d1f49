import DocumentModel

/// Why a JavaScript function could not be compiled or called.
///
/// `JSError` owns the mapping of every engine outcome to a Swift error: compile failures with
/// Duktape's message and line, values thrown by the script (as JSON, so a caller can read
/// Sync Gateway's `{forbidden: "..."}` objects), and the time-budget outcomes `timeout`
/// (this call overran) and `wedged` (an earlier call overran; the function is dead).
public enum JSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The source did not compile, or did not evaluate to a function. `message` is Duktape's
    /// (e.g. "SyntaxError: parse error (line 3)"); `line` is 1-based in the given source.
    case compile(message: String, line: Int?)

    /// The script threw, or its result could not be turned into JSON (e.g. a cyclic object).
    ///
    /// A thrown non-Error value arrives as is: `throw({forbidden: "x"})` is
    /// `.object(["forbidden": "x"])`, `throw "x"` is `.string("x")`, `throw undefined` is
    /// `.null`. An `Error` object (`throw new Error("x")`, a `TypeError` from the engine)
    /// arrives as an object with its own enumerable properties plus `name`, `message` and,
    /// when known, `lineNumber`. A host function that threw `JSError.thrown(v)` and was not
    /// caught by the script arrives as `v`.
    case thrown(JSON)

    /// This call did not finish within the time budget. The function is now wedged.
    case timeout

    /// An earlier call timed out: its thread is still stuck, and this function refuses to run.
    case wedged

    /// A host function called back into the very function that is running it.
    case reentrantCall

    /// The engine could not start: heap or thread creation failed.
    case engineUnavailable(String)

    /// A one-line description, e.g. `TypeError: cannot read property 'x' of null (line 2)`.
    public var message: String {
        switch self {
        case let .compile(message, line):
            if let line, !message.contains("(line ") { return "\(message) (line \(line))" }
            return message
        case .thrown(let value):
            return Self.describe(thrown: value)
        case .timeout:
            return "the JavaScript function did not finish within its time budget"
        case .wedged:
            return "the JavaScript function is wedged: an earlier call timed out"
        case .reentrantCall:
            return "a host function called back into the JavaScript function running it"
        case .engineUnavailable(let reason):
            return "the JavaScript engine could not start: \(reason)"
        }
    }

    public var description: String { "JSError: \(message)" }

    /// The value the script threw, if this is `.thrown`.
    public var thrownValue: JSON? {
        if case .thrown(let value) = self { return value }
        return nil
    }

    /// Sync Gateway's reading of a thrown object: the string under `key`
    /// (e.g. `"forbidden"` or `"unauthorized"`), if the script threw such an object.
    public func thrownString(forKey key: String) -> String? {
        guard case .thrown(.object(let object)) = self, case .string(let s)? = object[key] else {
            return nil
        }
        return s
    }

    private static func describe(thrown value: JSON) -> String {
        switch value {
        case .string(let s):
            return s
        case .object(let object):
            if case .string(let name)? = object["name"], case .string(let message)? = object["message"] {
                var text = message.isEmpty ? name : "\(name): \(message)"
                if let line = object["lineNumber"], case .int(let n) = line, !text.contains("(line ") {
                    text += " (line \(n))"
                }
                return text
            }
            return value.canonicalString
        default:
            return value.canonicalString
        }
    }
}
