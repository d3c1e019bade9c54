import Foundation

/// How Coffer writes a size for people: `512 B`, `1.2 KB`, `34 MB` — decimal units, as file
/// browsers show them. One rule for the REPL's columns and for questions every front end asks.
public enum SizeText {
    /// `bytes` in decimal units, to three digits: `999 B`, `1.2 KB`, `34 MB`.
    public static func decimal(_ bytes: Int64) -> String {
        if bytes < 1000 { return "\(bytes) B" }
        let units = ["KB", "MB", "GB", "TB", "PB"]
        var value = Double(bytes) / 1000
        var unit = 0
        while value >= 999.95 && unit < units.count - 1 { value /= 1000; unit += 1 }
        let rounded = value < 10 ? (value * 10).rounded() / 10 : value.rounded()
        let text = rounded == rounded.rounded() && value >= 10 ? String(Int(rounded)) : String(format: "%.1f", rounded)
        return "\(text) \(units[unit])"
    }
}
