/// The n-way property merge of the `merge` policy (ARCHITECTURE.md §4); owns
/// the rules that combine several branches' bodies against their merge base.
///
/// Input: the merge base body and the branches' bodies, **best first in winner
/// order**. For every key present in the base or in any branch, with `base` its
/// value in the base and `v₁…vₙ` its values in the branches (each possibly
/// absent), a branch *changed* the key when its value differs from the base's
/// (`JSON ==`: numbers by value, strings by bytes; "absent" is a value too):
///
/// 1. No branch changed it: the base value stays (absent stays absent).
/// 2. Every branch that changed it has the same value (an absent value being a
///    removal): that value. So a property removed by one branch and unchanged by
///    the others is removed, and a property added identically by two is added.
/// 3. Branches changed it differently, the base value is an object or absent,
///    and every changed value is an object: the objects are merged recursively
///    by these same rules, against the base object (`{}` when absent; an
///    unchanged branch contributes the base object).
/// 4. Otherwise (values of different kinds, scalars, arrays, a removal against
///    an edit): the value of the first changed branch in winner order.
///
/// Arrays are values, never merged element by element. At the top level,
/// `_attachments` is merged by attachment name with rules 1, 2 and 4, each
/// attachment being one value compared by its digest view (`content_type`,
/// `digest`, `length`; `revpos` and `stub` are ignored), so two branches that
/// add different attachments keep both; absent, `null` and `{}` attachments are
/// all "no attachments", and an empty result has no `_attachments` key. A
/// malformed `_attachments` (not an object) in any input makes it one plain
/// value (rules 1, 2, 4). Other top-level keys starting with `_` are ignored.
public enum ConflictMerge {
    /// The merged body of `branches` (best first in winner order) against `base`.
    public static func merge(base: [String: JSON], branches: [[String: JSON]]) -> [String: JSON] {
        let attachmentsKey = "_attachments"
        let base = ConflictResolver.userBody(base)
        let branches = branches.map(ConflictResolver.userBody)
        var result = mergeObjects(base: base.filter { $0.key != attachmentsKey },
                                  branches: branches.map { $0.filter { $0.key != attachmentsKey } })
        if let attachments = mergeAttachments(base: base[attachmentsKey], branches: branches.map { $0[attachmentsKey] }) {
            result[attachmentsKey] = attachments
        }
        return result
    }

    /// Rules 1–4 over every key of `base` and `branches`.
    static func mergeObjects(base: [String: JSON], branches: [[String: JSON]]) -> [String: JSON] {
        var keys = Set(base.keys)
        for branch in branches { keys.formUnion(branch.keys) }
        var result = [String: JSON](minimumCapacity: keys.count)
        for key in keys {
            if let value = mergeValue(base: base[key], values: branches.map { $0[key] }) {
                result[key] = value
            }
        }
        return result
    }

    /// The merged value of one key (nil: absent).
    static func mergeValue(base: JSON?, values: [JSON?]) -> JSON? {
        switch decide(base: base, values: values, equal: { $0 == $1 }) {
        case .keep(let value):
            return value
        case .divergent(let changed):
            if base == nil || base?.objectValue != nil,
               changed.allSatisfy({ values[$0]?.objectValue != nil }) {
                let baseObject = base?.objectValue ?? [:]
                let objects = values.map { $0?.objectValue ?? baseObject }
                return .object(mergeObjects(base: baseObject, branches: objects))
            }
            return values[changed[0]]
        }
    }

    /// `_attachments` merged by name (nil: no attachments).
    static func mergeAttachments(base: JSON?, branches: [JSON?]) -> JSON? {
        func entries(_ value: JSON?) -> [String: JSON]? {
            switch value {
            case nil, .null?: return [:]
            case .object(let o)?: return o
            default: return nil
            }
        }
        guard let baseEntries = entries(base) else { return atomic(base: base, values: branches) }
        var branchEntries = [[String: JSON]]()
        for value in branches {
            guard let e = entries(value) else { return atomic(base: base, values: branches) }
            branchEntries.append(e)
        }
        var names = Set(baseEntries.keys)
        for e in branchEntries { names.formUnion(e.keys) }
        var result = [String: JSON](minimumCapacity: names.count)
        for name in names {
            let values = branchEntries.map { $0[name] }
            let merged: JSON?
            switch decide(base: baseEntries[name], values: values, equal: sameAttachment) {
            case .keep(let value): merged = value
            case .divergent(let changed): merged = values[changed[0]]
            }
            if let merged { result[name] = merged }
        }
        return result.isEmpty ? nil : .object(result)
    }

    /// A malformed `_attachments` merged as one plain value (rules 1, 2, 4).
    private static func atomic(base: JSON?, values: [JSON?]) -> JSON? {
        switch decide(base: base, values: values, equal: { $0 == $1 }) {
        case .keep(let value): return value
        case .divergent(let changed): return values[changed[0]]
        }
    }

    /// Whether two attachment entries are the same attachment: equal digest views.
    static func sameAttachment(_ a: JSON?, _ b: JSON?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        let reduced = RevisionBody.reduceAttachments(["a": a, "b": b])
        return reduced["a"] == reduced["b"]
    }

    enum Decision {
        /// Rules 1 and 2: the value to keep (nil: absent).
        case keep(JSON?)
        /// Several different changes: the indices of the changed branches, ascending.
        case divergent([Int])
    }

    /// Rules 1 and 2, or the changed branches when they disagree.
    static func decide(base: JSON?, values: [JSON?], equal: (JSON?, JSON?) -> Bool) -> Decision {
        let changed = values.indices.filter { !equal(values[$0], base) }
        guard let first = changed.first else { return .keep(base) }
        if changed.allSatisfy({ equal(values[$0], values[first]) }) { return .keep(values[first]) }
        return .divergent(changed)
    }
}
