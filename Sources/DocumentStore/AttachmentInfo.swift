import DocumentModel

/// The metadata of one attachment as kept in a revision's `_attachments`:
/// content type, `sha1-<base64>` digest, length and the generation that added it.
public struct AttachmentInfo: Sendable, Equatable {
    public var contentType: String
    public var digest: String
    public var length: Int
    public var revpos: Int

    public init(contentType: String, digest: String, length: Int, revpos: Int) {
        self.contentType = contentType
        self.digest = digest
        self.length = length
        self.revpos = revpos
    }

    /// The stored form (no `stub`: that is added when a revision is served).
    public var json: JSON {
        .object([
            "content_type": .string(contentType),
            "digest": .string(digest),
            "length": .int(Int64(length)),
            "revpos": .int(Int64(revpos)),
        ])
    }

    /// Reads resolved metadata (entries with a digest and a length); others are skipped.
    public static func parse(_ json: JSON?) -> [String: AttachmentInfo] {
        guard let entries = json?.objectValue else { return [:] }
        var result: [String: AttachmentInfo] = [:]
        for (name, entry) in entries {
            guard let info = AttachmentInfo(entry) else { continue }
            result[name] = info
        }
        return result
    }

    public init?(_ entry: JSON) {
        guard let digest = entry["digest"]?.stringValue, let length = entry["length"]?.intValue else {
            return nil
        }
        self.init(
            contentType: entry["content_type"]?.stringValue ?? "application/octet-stream",
            digest: digest,
            length: Int(length),
            revpos: Int(entry["revpos"]?.intValue ?? 1)
        )
    }
}
