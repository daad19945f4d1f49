/// The part of a document body that a revision digest covers; owns the
/// reduction of a body to the canonical bytes fed to `RevID.compute`.
public enum RevisionBody: Sendable {
    /// Default attachment content type when a body does not give one.
    public static let defaultContentType = "application/octet-stream"

    /// The digest-relevant view of a body: every top-level key starting with `_`
    /// is dropped except `_attachments`; a non-empty `_attachments` object keeps,
    /// per attachment, only `content_type` (defaulting to
    /// `application/octet-stream`), `digest` and `length` (when present). An empty
    /// or `null` `_attachments` is dropped; a malformed one (not an object, or an
    /// entry that is not an object) is kept as given.
    public static func digestView(_ body: [String: JSON]) -> [String: JSON] {
        var view = [String: JSON](minimumCapacity: body.count)
        for (key, value) in body {
            if key.utf8.first == UInt8(ascii: "_") {
                guard key == "_attachments" else { continue }
                switch value {
                case .null:
                    continue
                case .object(let attachments):
                    if attachments.isEmpty { continue }
                    view[key] = .object(reduceAttachments(attachments))
                default:
                    view[key] = value
                }
            } else {
                view[key] = value
            }
        }
        return view
    }

    /// The canonical bytes of `digestView(body)`, as used for revision digests.
    public static func digestBody(_ body: [String: JSON]) -> [UInt8] {
        JSON.object(digestView(body)).canonicalBytes()
    }

    static func reduceAttachments(_ attachments: [String: JSON]) -> [String: JSON] {
        var reduced = [String: JSON](minimumCapacity: attachments.count)
        for (name, meta) in attachments {
            guard case .object(let fields) = meta else {
                reduced[name] = meta
                continue
            }
            var kept: [String: JSON] = ["content_type": fields["content_type"] ?? .string(defaultContentType)]
            if let digest = fields["digest"] { kept["digest"] = digest }
            if let length = fields["length"] { kept["length"] = length }
            reduced[name] = .object(kept)
        }
        return reduced
    }
}
