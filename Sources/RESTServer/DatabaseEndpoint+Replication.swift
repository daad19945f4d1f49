import DocumentModel
import DocumentStore
import HTTPTypes
import Hummingbird

extension DatabaseEndpoint {
    /// Admin only: `PUT/GET/DELETE /{db}/_replication/{id}` and `GET /{db}/_replication/`.
    func replication(id: String?, controller: (any ReplicationController)?) async throws -> Response {
        let controller = try adminController(controller)
        guard let id, !id.isEmpty else {
            try allow(request, "GET,HEAD", request.isRead)
            return RESTResponse.json(.array(controller.replicationDefinitions(database: store.name).sorted { $0.key < $1.key }.map(\.value)))
        }
        switch request.method {
        case .get, .head:
            guard let definition = controller.replicationDefinitions(database: store.name)[id] else {
                throw HTTPFailure.notFound("no replication \(id)")
            }
            return RESTResponse.json(definition)
        case .put, .post:
            let body = try await request.jsonObjectBody(limit: configuration.maxRequestBytes)
            do {
                try await controller.putReplication(database: store.name, id: id, definition: body)
            } catch let error as ReplicationControlError {
                throw HTTPFailure(error)
            }
            return RESTResponse.json(controller.replicationDefinitions(database: store.name)[id] ?? ["replication_id": .string(id)], status: .created)
        case .delete:
            let removed: Bool
            do {
                removed = try await controller.removeReplication(database: store.name, id: id)
            } catch let error as ReplicationControlError {
                throw HTTPFailure(error)
            }
            guard removed else { throw HTTPFailure.notFound("no replication \(id)") }
            return RESTResponse.json(["ok": true])
        default:
            throw HTTPFailure.methodNotAllowed("GET,HEAD,PUT,DELETE")
        }
    }

    /// Admin only: `GET /{db}/_replicationStatus/` and `GET /{db}/_replicationStatus/{id}`;
    /// `PUT /{db}/_replicationStatus/{id}?action=stop|start` stops a replication (it stays,
    /// `stopped`) or starts it again, as Sync Gateway does.
    func replicationStatus(id: String?, controller: (any ReplicationController)?) async throws -> Response {
        let controller = try adminController(controller)
        if let id, !id.isEmpty, request.method == .put || request.method == .post {
            let action = query["action"]
            guard action == "stop" || action == "start" else { throw HTTPFailure.badRequest("action must be stop or start") }
            guard await controller.setReplicationRunning(database: store.name, id: id, running: action == "start") else {
                throw HTTPFailure.notFound("no replication \(id)")
            }
            return RESTResponse.json(controller.replicationStatuses(database: store.name)[id] ?? ["replication_id": .string(id)])
        }
        try allow(request, "GET,HEAD", request.isRead)
        let statuses = controller.replicationStatuses(database: store.name)
        guard let id, !id.isEmpty else {
            return RESTResponse.json(.array(statuses.sorted { $0.key < $1.key }.map(\.value)))
        }
        guard let status = statuses[id] else { throw HTTPFailure.notFound("no replication \(id)") }
        return RESTResponse.json(status)
    }

    private func adminController(_ controller: (any ReplicationController)?) throws(HTTPFailure) -> any ReplicationController {
        guard request.isAdmin else {
            throw HTTPFailure(.forbidden, "forbidden", "Replications are managed on the admin port")
        }
        guard let controller else { throw HTTPFailure.notFound("replication is not available") }
        return controller
    }
}
