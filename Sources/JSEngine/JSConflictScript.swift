import DocumentModel

/// The `js` conflict policy's function (`function(conflicts, base) {…}` from a
/// database's `"conflicts": {"resolver": …}`) as a `ConflictScript`; owns its
/// compiled `JSFunction`. A thrown JavaScript error, a timeout or a wedged engine
/// becomes a Swift error, which leaves the conflict unresolved.
public struct JSConflictScript: ConflictScript {
    public let function: JSFunction

    /// Compiles `source`; a syntax error throws `JSError.compile` with the line.
    public init(source: String, options: JSFunction.Options = .init(filename: "conflicts.resolver")) throws(JSError) {
        function = try JSFunction(source: source, options: options)
    }

    public func resolve(conflicts: [JSON], base: JSON?) throws -> JSON? {
        let result = try function.call([.array(conflicts), base ?? .null])
        return result == .null ? nil : result
    }
}
