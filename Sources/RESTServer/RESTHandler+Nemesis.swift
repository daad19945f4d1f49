import DocumentModel
import HTTPTypes
import Hummingbird

extension RESTHandler {
    /// `/_nemesis` and `/_nemesis/{id}` (admin port only; 403 while the config leaves the
    /// nemesis off).
    func nemesisRoute(_ request: RESTRequest) async throws -> Response {
        try request.requireAdmin("The nemesis is on the admin port")
        switch request.segments.count {
        case 1: try allow(request, "GET,HEAD,POST,DELETE", [.get, .head, .post, .delete].contains(request.method))
        case 2: try allow(request, "DELETE", request.method == .delete)
        default: throw HTTPFailure.notFound("Unknown URL")
        }
        guard let nemesis, nemesis.nemesisEnabled else {
            if request.isRead, request.segments.count == 1 { return RESTResponse.json(["enabled": false]) }
            throw HTTPFailure(
                .forbidden, "forbidden",
                "the nemesis is off: it injects faults only when the node's config says \"nemesis\": {\"enabled\": true}")
        }
        switch request.segments.count {
        case 1:
            switch request.method {
            case .get, .head:
                return RESTResponse.json(nemesis.nemesisStatus())
            case .post:
                let body = try await request.jsonBody(limit: 64 * 1024)
                do throws(NemesisRefusal) {
                    return RESTResponse.json(try nemesis.injectFault(body), status: .created)
                } catch {
                    throw HTTPFailure(.init(code: error.status), error.status == 400 ? "bad_request" : "nemesis", error.reason)
                }
            case .delete:
                return RESTResponse.json(["ok": true, "lifted": .int(Int64(nemesis.liftAllFaults()))])
            default:
                throw HTTPFailure.methodNotAllowed("GET,HEAD,POST,DELETE")
            }
        case 2:
            try allow(request, "DELETE", request.method == .delete)
            guard let id = Int(request.segments[1]), nemesis.liftFault(id: id) else {
                throw HTTPFailure.notFound("no fault \(request.segments[1]) in effect")
            }
            return RESTResponse.json(["ok": true])
        default:
            throw HTTPFailure.notFound("Unknown URL")
        }
    }
}
