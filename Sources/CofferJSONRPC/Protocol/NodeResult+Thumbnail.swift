import CofferCore
import CofferPreview
import FileService

extension NodeResult {
    /// The node as a listing shows it: with whether it has a thumbnail, decided once for
    /// every front end (``Previewer/offersThumbnail(_:registry:)``; the web page draws one
    /// where this says so).
    init(_ node: FileNode, in context: RequestContext) {
        self.init(node)
        if Previewer.offersThumbnail(node, registry: context.service.registry) { thumbnail = true }
    }
}
