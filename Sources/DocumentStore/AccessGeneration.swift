import GRDB
import Synchronization

/// A counter of the database's committed changes to what decides a user's access:
/// the principals (users, roles) and the channel and role grants of every collection.
/// It moves on after every commit that touched one of those tables, whatever code path
/// wrote them: temporary triggers on the writer connection (`install(on:)`) flag the
/// transaction, and its commit moves the counter. A reader that computed something from
/// those tables may keep it as long as the counter still reads the value it read
/// *before* computing (`DocumentStore.accessGeneration`).
///
/// Triggers fire for each changed row, so a transaction that writes documents without
/// grants leaves the counter alone; a savepoint rolled back after a grant change moves
/// it anyway (harmless: a cache is computed again).
public final class AccessGeneration: Sendable {
    private let value = Atomic<UInt64>(0)
    /// A trigger fired in the writer's open transaction.
    private let pending = Atomic<Bool>(false)

    init() {}

    /// The number of committed transactions that changed principals or grants so far
    /// (in this process).
    public var current: UInt64 { value.load(ordering: .acquiring) }

    /// The tables whose changes move the counter: the database's principals, and the
    /// grants of each collection (`tableSets`: 0 is the default collection).
    static func tables(tableSets: [Int]) -> [String] {
        ["principals"] + tableSets.flatMap { set in ["access_grants", "role_grants"].map { Tables.prefix(set) + $0 } }
    }

    /// The SQL function the triggers call.
    static let functionName = "shoal_access_changed"

    /// Sets up the writer connection `db`: the function and the commit observer on first
    /// use, then a trigger per change kind on each table of `tableSets` (idempotent; run
    /// again for a collection created later).
    func install(on db: Database, tableSets: [Int]) throws {
        let installed = try Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_temp_master WHERE type = 'trigger' AND name LIKE 'shoal_access_%')") ?? false
        if !installed {
            db.add(function: DatabaseFunction(Self.functionName, argumentCount: 0, pure: false) { [self] _ in
                self.pending.store(true, ordering: .relaxed)
                return nil
            })
            db.add(transactionObserver: Observer(generation: self), extent: .databaseLifetime)
        }
        for table in Self.tables(tableSets: tableSets) {
            for event in ["INSERT", "UPDATE", "DELETE"] {
                try db.execute(sql: """
                    CREATE TEMP TRIGGER IF NOT EXISTS "shoal_access_\(table)_\(event.lowercased())" AFTER \(event) ON main."\(table)"
                    BEGIN SELECT \(Self.functionName)(); END
                    """)
            }
        }
    }

    fileprivate func committed() {
        if pending.exchange(false, ordering: .relaxed) { value.add(1, ordering: .releasing) }
    }

    fileprivate func rolledBack() {
        pending.store(false, ordering: .relaxed)
    }

    /// Moves the counter when a transaction whose triggers fired commits.
    private final class Observer: TransactionObserver {
        let generation: AccessGeneration
        init(generation: AccessGeneration) { self.generation = generation }
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { generation.committed() }
        func databaseDidRollback(_ db: Database) { generation.rolledBack() }
    }
}
