import Foundation

/// This node's persistent ID: a UUID kept in `<data>/node-id`, created on first start.
enum NodeIdentity {
    static func load(dataDirectory: String) throws -> String {
        let path = (dataDirectory as NSString).appendingPathComponent("node-id")
        if let data = FileManager.default.contents(atPath: path) {
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty { return text }
        }
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        let id = UUID().uuidString.lowercased()
        try DurableFile.replace(path, with: Array((id + "\n").utf8))
        return id
    }
}
