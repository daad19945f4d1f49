import DocumentModel
import Foundation
import GRDB

/// How keys fall into `group_level` groups, and which stored groups make up a group.
///
/// `ViewGrouping` owns CouchDB's grouping rule: at `group_level=k` an array key is
/// truncated to its first k elements; any other key (and a shorter array) is a group of
/// its own; level 0 is one group, key `null`. Pure, except for the SQL text it builds.
enum ViewGrouping {
    /// A grouping of a reduce query.
    enum Level: Sendable, Equatable {
        /// `group_level=k` (0: no grouping, `reduce=true` alone).
        case level(Int)
        /// `group=true`: one group per distinct key.
        case exact

        /// The group key of `key`.
        func groupKey(_ key: JSON) -> JSON {
            switch self {
            case .exact: return key
            case .level(let level): return ViewGrouping.truncate(key, level: level)
            }
        }

        /// The `view_groups` level holding these groups, if it is stored.
        var storedLevel: Int? {
            switch self {
            case .exact: return ViewStorage.exactLevel
            case .level(let level): return level <= ViewStorage.storedLevels ? level : nil
            }
        }
    }

    static func truncate(_ key: JSON, level: Int) -> JSON {
        if level == 0 { return .null }
        if case .array(let items) = key, items.count > level { return .array(Array(items.prefix(level))) }
        return key
    }

    /// The query reading the partial reductions of the children (at `childLevel`) of the
    /// level-`level` group with key `key`.
    static func childQuery(index: Int64, childLevel: Int, key: JSON, level: Int) -> (String, StatementArguments) {
        let base = "SELECT value FROM view_groups WHERE view = ? AND level = ?"
        if level == 0 { return (base, [index, childLevel]) }
        if case .array(let items) = key, items.count == level {
            let prefix = ViewCollation.arrayPrefix(items[...])
            return (base + " AND sortkey >= ? AND sortkey < ?", [index, childLevel, Data(prefix), Data(prefix + [0xFF])])
        }
        return (base + " AND sortkey = ?", [index, childLevel, Data(ViewCollation.sortKey(key))])
    }
}
