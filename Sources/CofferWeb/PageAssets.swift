/// The page: plain HTML, CSS and JavaScript in `Page/`, compiled in (no build step).
enum PageAssets {
    static let index = PackageResources.index_html
    static let script = PackageResources.app_js
    static let style = PackageResources.app_css
}
