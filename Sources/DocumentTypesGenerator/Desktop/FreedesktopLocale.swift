/// The locale names freedesktop.org files use (`Name[zh_CN]`, `xml:lang="zh_CN"`) for the
/// BCP 47 tags a manifest uses (`zh-Hans`).
enum FreedesktopLocale {
    /// `zh-Hans` → `zh_CN`, `zh-Hant` → `zh_TW`, `pt-BR` → `pt_BR`, `sr-Latn` → `sr@latin`, `de` → `de`.
    static func name(for tag: String) -> String {
        let parts = tag.split(separator: "-").map(String.init)
        guard let language = parts.first?.lowercased() else { return tag }
        var region: String?
        var modifier: String?
        for part in parts.dropFirst() {
            if part.count == 2 || (part.count == 3 && part.allSatisfy(\.isNumber)) {
                region = part.uppercased()
            } else if part.count == 4 {
                switch part.lowercased() {
                case "hans": region = region ?? "CN"
                case "hant": region = region ?? "TW"
                case "latn": modifier = "latin"
                case "cyrl": modifier = "cyrillic"
                default: break
                }
            }
        }
        return language + (region.map { "_" + $0 } ?? "") + (modifier.map { "@" + $0 } ?? "")
    }
}
