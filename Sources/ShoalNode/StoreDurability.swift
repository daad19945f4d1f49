import DocumentStore
/// The commit durability of a database (re-exported for the command line).
public typealias StoreDurability = StoreConfiguration.Durability
