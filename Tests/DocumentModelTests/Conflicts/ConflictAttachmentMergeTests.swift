import Testing
@testable import DocumentModel

/// `merge` of `_attachments`: by attachment name, each attachment one value.
@Suite struct ConflictAttachmentMergeTests {
    private func attachment(_ digest: String, revpos: Int64 = 1, type: String = "image/png", length: Int64 = 10) -> JSON {
        ["digest": .string(digest), "content_type": .string(type), "length": .int(length), "revpos": .int(revpos), "stub": true]
    }

    @Test func attachmentsAddedOnDifferentBranchesAreBothKept() {
        let old = attachment("sha1-old")
        let merged = ConflictMerge.merge(
            base: ["a": 1, "_attachments": ["old.txt": old]],
            branches: [
                ["a": 1, "_attachments": ["old.txt": old, "photo.png": attachment("sha1-photo", revpos: 2)]],
                ["a": 1, "_attachments": ["old.txt": old, "doc.pdf": attachment("sha1-doc", revpos: 3, type: "application/pdf")]],
                ["a": 2, "_attachments": ["old.txt": old]],
            ])
        #expect(merged == ["a": 2, "_attachments": [
            "old.txt": old, "photo.png": attachment("sha1-photo", revpos: 2),
            "doc.pdf": attachment("sha1-doc", revpos: 3, type: "application/pdf"),
        ]])
    }

    @Test func removedAttachmentIsRemovedAndEmptyResultDropsTheKey() {
        let old = attachment("sha1-old")
        #expect(ConflictMerge.merge(base: ["_attachments": ["old.txt": old], "a": 1],
                                    branches: [["_attachments": ["old.txt": old], "a": 2], ["a": 1]]) == ["a": 2])
        #expect(ConflictMerge.merge(base: ["_attachments": ["old.txt": old], "a": 1],
                                    branches: [["_attachments": [:], "a": 1], ["_attachments": nil, "a": 1, "b": 1]]) == ["a": 1, "b": 1])
    }

    @Test func sameAttachmentNameChangedDifferentlyGoesToTheWinnerOrder() {
        let base: [String: JSON] = ["_attachments": ["f": attachment("sha1-0")]]
        let merged = ConflictMerge.merge(base: base, branches: [
            ["_attachments": ["f": attachment("sha1-0")]],
            ["_attachments": ["f": attachment("sha1-1", revpos: 2)]],
            ["_attachments": ["f": attachment("sha1-2", revpos: 4)]],
        ])
        #expect(merged == ["_attachments": ["f": attachment("sha1-1", revpos: 2)]])
        // A removal ranked first beats a change.
        #expect(ConflictMerge.merge(base: base, branches: [[:], ["_attachments": ["f": attachment("sha1-1")]]]) == [:])
    }

    @Test func attachmentsCompareByTheirDigestView() {
        // `revpos` and `stub` are not part of the attachment; a missing content type is the default one.
        let base: [String: JSON] = ["_attachments": ["f": ["digest": "sha1-0", "length": 3, "revpos": 1]]]
        let same: JSON = ["digest": "sha1-0", "length": 3, "revpos": 5, "content_type": "application/octet-stream", "stub": true]
        let merged = ConflictMerge.merge(base: base, branches: [["_attachments": ["f": same], "x": 1], ["y": 1, "_attachments": ["f": same]]])
        #expect(merged == ["x": 1, "y": 1, "_attachments": ["f": ["digest": "sha1-0", "length": 3, "revpos": 1]]])
        // Nested fields are not merged: a changed content type replaces the whole entry.
        let retyped: JSON = ["digest": "sha1-0", "length": 3, "revpos": 1, "content_type": "text/plain"]
        let other: JSON = ["digest": "sha1-9", "length": 4, "revpos": 2]
        #expect(ConflictMerge.merge(base: base, branches: [["_attachments": ["f": retyped]], ["_attachments": ["f": other]]])
                == ["_attachments": ["f": retyped]])
    }

    @Test func malformedAttachmentsAreOnePlainValue() {
        #expect(ConflictMerge.merge(base: ["_attachments": ["f": attachment("sha1-0")]],
                                    branches: [["_attachments": "bad"], ["_attachments": ["g": attachment("sha1-1")]]])
                == ["_attachments": "bad"])
        #expect(ConflictMerge.merge(base: ["_attachments": ["f": attachment("sha1-0")]],
                                    branches: [["_attachments": ["f": attachment("sha1-0")]], ["_attachments": [1]]])
                == ["_attachments": [1]])
    }

    /// Through the resolver: the merged body's revision ID is the store's, with
    /// attachments reduced to their digest view.
    @Test func resolutionWithAttachments() throws {
        var doc = ConflictScenario()
        let root = doc.add(["type": "note", "_attachments": ["a.txt": attachment("sha1-a")]], after: nil)
        let first = doc.edit(["type": "note", "title": "t",
                              "_attachments": ["a.txt": attachment("sha1-a"), "b.png": attachment("sha1-b", revpos: 2)]],
                             after: root, length: 2)
        let second = doc.edit(["type": "note", "_attachments": ["a.txt": attachment("sha1-a"), "c.jpg": attachment("sha1-c", revpos: 2)]],
                              after: root)
        let resolution = try doc.resolution(.merge)
        let result = try #require(resolution.result)
        #expect(result.parent == first)
        #expect(resolution.tombstones.map(\.parent) == [second])
        #expect(result.body == ["type": "note", "title": "t", "_attachments": [
            "a.txt": attachment("sha1-a"), "b.png": attachment("sha1-b", revpos: 2), "c.jpg": attachment("sha1-c", revpos: 2),
        ]])
        #expect(result.revID == RevID.compute(parent: first, deleted: false, canonicalBody: RevisionBody.digestBody(result.body)))
        #expect(result.revID != RevID.compute(parent: first, deleted: false, canonicalBody: result.canonicalBody))
    }
}
