import DocumentModel
import RESTServer

extension ShoalNode: NemesisController {
    public var nemesisEnabled: Bool { nemesis != nil }

    public func nemesisStatus() -> JSON {
        nemesis?.status ?? ["enabled": false]
    }

    public func injectFault(_ body: JSON) throws(NemesisRefusal) -> JSON {
        guard let nemesis else { throw NemesisRefusal(status: 403, reason: "the nemesis is off") }
        do throws(NemesisError) {
            return try nemesis.apply(try NemesisFault(json: body, maxDuration: nemesis.settings.maxDuration))
        } catch {
            throw NemesisRefusal(status: error.status, reason: error.reason)
        }
    }

    public func liftFault(id: Int) -> Bool {
        nemesis?.lift(id: id) ?? false
    }

    public func liftAllFaults() -> Int {
        nemesis?.liftAll() ?? 0
    }
}
