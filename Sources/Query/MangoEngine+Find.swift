import DocumentModel
import DocumentStore
import Foundation

extension MangoEngine {
    /// Plans `query` against the database's indexes.
    public func plan(_ query: MangoQuery) async throws -> MangoPlan {
        try MangoPlan.choose(query, indexes: try await indexes())
    }

    /// Runs `query`: the matching documents the caller may read (`readable`), in index
    /// (or ID) order, after `skip`, at most `limit`, plus the bookmark of the next page.
    /// With `update` (CouchDB's default) the index first catches up with every commit.
    public func find(
        _ query: MangoQuery, update: Bool = true, readable: @Sendable (DocumentListing) async -> Bool
    ) async throws -> Result {
        let plan = try await plan(query)
        var result = Result(documents: [], bookmark: "nil", warning: plan.warning)
        var position = try Bookmark(query.bookmark)
        var skip = position == nil ? query.skip : 0
        let wanted = query.limit
        guard wanted > 0 else { return result }

        func consider(_ listing: DocumentListing) async -> Bool {
            result.docsExamined += 1
            guard !listing.deleted, !listing.docID.hasPrefix("_design/"), let body = listing.body else { return false }
            guard query.selector.matches(Self.document(listing, body: body)), await readable(listing) else { return false }
            if skip > 0 {
                skip -= 1
                return false
            }
            result.documents.append(listing)
            return result.documents.count >= wanted
        }

        if let index = plan.index {
            let id = update ? try await self.update(index) : try await indexID(index)
            scanning: while true {
                let after = position.flatMap { $0.key.map { ($0, position!.id) } }
                let rows = try await store.auxiliaryRead { db in
                    try MangoStorage.scan(db, index: id, lower: plan.lower, upper: plan.upper, after: after,
                                          reverse: plan.reverse, limit: Self.batch)
                }
                result.keysExamined += rows.count
                let listings = try await store.documents(rows.map(\.id), includeBodies: true)
                for (row, listing) in zip(rows, listings) {
                    position = Bookmark(key: row.key, id: row.id)
                    if let listing, await consider(listing) { break scanning }
                }
                if rows.count < Self.batch {
                    position = nil
                    break
                }
            }
        } else {
            var allDocs = AllDocsQuery()
            allDocs.includeBodies = true
            allDocs.descending = plan.reverse
            allDocs.limit = Self.batch
            scanning: while true {
                let (low, high) = plan.idRange
                if plan.reverse {
                    allDocs.startKey = position?.id ?? high
                    allDocs.endKey = low
                } else {
                    allDocs.startKey = position?.id ?? low
                    allDocs.endKey = high
                }
                allDocs.skip = position == nil ? 0 : 1  // the bookmark's own document was seen
                let listings = try await store.allDocs(allDocs)
                result.keysExamined += listings.count
                for listing in listings {
                    position = Bookmark(key: nil, id: listing.docID)
                    if await consider(listing) { break scanning }
                }
                if listings.count < Self.batch {
                    position = nil
                    break
                }
            }
        }
        result.bookmark = position?.encoded ?? "nil"
        return result
    }

    /// `_explain`: the plan, as CouchDB describes it.
    public func explain(_ query: MangoQuery) async throws -> JSON {
        try await plan(query).explanation(query, database: store.name)
    }
}

/// Where a page of `_find` stopped: the last row's sort key (nil on `_all_docs`) and
/// document ID, as an opaque base64url string (CouchDB's bookmarks are opaque too).
struct Bookmark: Sendable, Equatable {
    var key: [UInt8]?
    var id: String

    init(key: [UInt8]?, id: String) {
        self.key = key
        self.id = id
    }

    /// Decodes a bookmark; nil for none (`nil` is CouchDB's empty bookmark).
    init?(_ text: String?) throws(MangoError) {
        guard let text, text != "nil" else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let json = try? JSON.parse([UInt8](data)),
              let id = json["d"]?.stringValue
        else { throw .badRequest("Invalid bookmark value: \(text)") }
        self.id = id
        key = json["k"]?.stringValue.flatMap(Digests.bytes(fromHex:))
    }

    var encoded: String {
        let json: JSON = ["d": .string(id), "k": key.map { .string(Digests.hex($0)) } ?? .null]
        return Data(json.canonicalBytes()).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
