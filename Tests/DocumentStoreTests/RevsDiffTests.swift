import DocumentModel
@testable import DocumentStore
import Testing
import TestSupport

/// `revsDiff` (per document, `_revs_diff`) and `missingRevisions` (per offered revision,
/// a replication's `changes`) give the same answers, across several `IN (…)` queries.
@Suite struct RevsDiffTests {
    @Test func missingRevisionsAnswersEachOfferAsRevsDiffDoes() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        // 300 stored documents (more than one query's keys), every third with a branch.
        var stored: [String: [RevID]] = [:]
        for index in 0..<300 {
            let first = try await store.put("doc-\(index)", ["i": .int(Int64(index))])
            let second = try await store.put("doc-\(index)", ["i": .int(Int64(index)), "v": 2], parent: first.revID)
            stored["doc-\(index)"] = [first.revID, second.revID]
            if index % 3 == 0 {
                let branch = try await store.replicate(
                    "doc-\(index)", ["b": 1], history: ["2-" + String(repeating: "b", count: 40), first.revID.description])
                stored["doc-\(index)"]!.append(branch.revID)
            }
        }
        var offered: [(docID: String, rev: RevID)] = []
        for index in stride(from: 0, to: 360, by: 1) {
            let docID = "doc-\(index % 330)"  // 30 unknown documents, and some offered twice
            offered.append((docID, RevID("3-" + String(repeating: "c", count: 40))!))
            if let known = stored[docID] { offered.append((docID, known[index % known.count])) }
            offered.append((docID, RevID("1-" + String(repeating: "d", count: 40))!))
        }
        let answers = try await store.missingRevisions(offered)
        #expect(answers.count == offered.count)

        var byDoc: [String: [RevID]] = [:]
        for (docID, rev) in offered { byDoc[docID, default: []].append(rev) }
        let diff = try await store.revsDiff(byDoc.map { ($0.key, $0.value) })
        var missing: [String: RevsDiffEntry] = [:]
        for entry in diff { missing[entry.docID] = entry }
        for ((docID, rev), answer) in zip(offered, answers) {
            guard let entry = missing[docID], entry.missing.contains(rev) else {
                #expect(answer == nil, "\(docID) \(rev) is stored")
                continue
            }
            #expect(answer == entry.possibleAncestors.filter { $0.generation < rev.generation }, "\(docID) \(rev)")
            if stored[docID] == nil { #expect(answer == []) }
        }
        // The stored revisions are never asked for; new ones always are.
        #expect(zip(offered, answers).contains { stored[$0.0.docID]?.contains($0.0.rev) == true && $0.1 == nil })
        #expect(zip(offered, answers).allSatisfy { $0.0.rev.generation == 3 ? $0.1 != nil : true })
    }
}
