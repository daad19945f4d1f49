/// Shoal's release version.
public enum ShoalVersion {
    public static let string = "0.1.0"
}
