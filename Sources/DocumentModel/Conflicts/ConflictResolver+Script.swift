// The `js` policy: calling the configured conflict function.

extension ConflictResolver {
    /// Why a script resolution failed (becomes `ConflictOutcome.failed`).
    struct ScriptFailure: Error, Equatable {
        let reason: String
    }

    /// The script's input for one leaf or the merge base: `body` plus `_rev`.
    public static func scriptArgument(body: [String: JSON], rev: RevID) -> JSON {
        var object = body
        object["_rev"] = .string(rev.description)
        return .object(object)
    }

    /// Runs `script` on the live leaves (best first in winner order) and reads its answer.
    ///
    /// Input: `conflicts` = each leaf's user body plus `_rev`; `base` = the merge
    /// base body plus its `_rev`, or nil (`null`) when the leaves share no root.
    /// Answer: nil, `null`, or an object whose `_deleted` is `true` → delete;
    /// another object → the new body, with every top-level `_` key dropped except
    /// `_attachments` (so `_id`, `_rev`, `_conflicts`… that a script copies from
    /// its input do not leak into the body). Anything else, or a throw → failure.
    static func runScript(_ script: any ConflictScript, leaves: [RevID], bodies: [[String: JSON]],
                          mergeBase: RevID?, baseBody: [String: JSON]?) -> Result<Verdict, ScriptFailure> {
        let conflicts = zip(bodies, leaves).map { scriptArgument(body: $0, rev: $1) }
        let base = mergeBase.flatMap { rev in baseBody.map { scriptArgument(body: $0, rev: rev) } }
        let answer: JSON?
        do {
            answer = try script.resolve(conflicts: conflicts, base: base)
        } catch {
            return .failure(ScriptFailure(reason: "the conflict script failed: \(error)"))
        }
        switch answer {
        case nil, .null?:
            return .success(.delete)
        case .object(let object)?:
            if object["_deleted"] == .bool(true) { return .success(.delete) }
            return .success(.body(userBody(object)))
        case let other?:
            return .failure(ScriptFailure(
                reason: "the conflict script returned \(kind(of: other)); expected an object, or null to delete"))
        }
    }

    /// "a string", "an array", … for messages.
    static func kind(of value: JSON) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
