/// The admin web UI's files: one HTML page, its style sheet and its JavaScript
/// modules (plain ES modules, no build step), compiled into the binary as SwiftPM
/// resources (`embedInCode`), so nothing is fetched from anywhere at run time.
/// `RESTServer` serves them under `/_admin/` on the admin listener.
public enum AdminAssets {
    /// One file: its media type and bytes.
    public struct Asset: Sendable {
        public let contentType: String
        public let bytes: [UInt8]
    }

    /// The files under `/_admin/assets/`, by name.
    static let files: [String: [UInt8]] = [
        "admin.css": PackageResources.admin_css,
        "app.js": PackageResources.app_js,
        "api.js": PackageResources.api_js,
        "dom.js": PackageResources.dom_js,
        "live.js": PackageResources.live_js,
        "charts.js": PackageResources.charts_js,
        "mesh.js": PackageResources.mesh_js,
        "documents.js": PackageResources.documents_js,
        "revtree.js": PackageResources.revtree_js,
        "conflicts.js": PackageResources.conflicts_js,
        "sync.js": PackageResources.sync_js,
        "users.js": PackageResources.users_js,
        "replications.js": PackageResources.replications_js,
        "metrics.js": PackageResources.metrics_js,
    ]

    /// The asset for a path below `/_admin/` (its segments): `assets/<name>` is a file;
    /// every other path is the page (its router shows the view the path names); nil
    /// for an unknown file.
    public static func asset(path: [String]) -> Asset? {
        guard path.first == "assets" else {
            return Asset(contentType: "text/html; charset=utf-8", bytes: PackageResources.index_html)
        }
        guard path.count == 2, let bytes = files[path[1]] else { return nil }
        return Asset(contentType: contentType(of: path[1]), bytes: bytes)
    }

    static func contentType(of name: String) -> String {
        if name.hasSuffix(".css") { return "text/css; charset=utf-8" }
        if name.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        return "application/octet-stream"
    }
}
