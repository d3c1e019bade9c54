/// The page: plain HTML, CSS and JavaScript modules in `Page/`, compiled in (no build step).
/// The browser loads the modules natively (`<script type="module">`, `import`).
enum PageAssets {
    static let index = PackageResources.index_html

    /// Every file the page loads, by its address.
    static let files: [String: (body: [UInt8], type: String)] = [
        "/app.css": (PackageResources.app_css, "text/css; charset=utf-8"),
        "/app.js": (PackageResources.app_js, script),
        "/bridge.js": (PackageResources.bridge_js, script),
        "/changes.js": (PackageResources.changes_js, script),
        "/common.js": (PackageResources.common_js, script),
        "/dialogs.js": (PackageResources.dialogs_js, script),
        "/preview.js": (PackageResources.preview_js, script),
        "/uploads.js": (PackageResources.uploads_js, script),
        "/words.js": (PackageResources.words_js, script),
    ]

    private static let script = "text/javascript; charset=utf-8"

    /// The page in `language`: `<html lang>` says which, for the page to speak it unless the
    /// person chose another (the browser's `Accept-Language` decides).
    static func index(in language: String) -> [UInt8] {
        let marker = Array(#"<html lang="en">"#.utf8)
        guard language != "en", let start = index.firstRange(of: marker) else { return index }
        var page = index
        page.replaceSubrange(start, with: Array(#"<html lang="\#(language)">"#.utf8))
        return page
    }
}
