/// What an application does with a file of a type it declares, when one is handed to it
/// (opened from a file manager, say).
public enum DocumentHandling: Sendable, Hashable {
    /// Use the file where it is (a bookmark), without copying it.
    case openInPlace
    /// Copy it into the application's own space (`files:/Import`).
    case importCopy
}

extension DocumentTypesManifest {
    /// The document type that claims files of type `identifier`: the one with a content type
    /// closest to it in the conformance tree (`public.folder` before `public.data` for a
    /// folder), the first in the manifest among equals; `nil` when none claims it.
    public func documentType(for identifier: String, in registry: TypeRegistry) -> DocumentType? {
        var best: (document: DocumentType, distance: Int)?
        for document in documentTypes {
            for content in document.contentTypes {
                guard let distance = Self.distance(from: identifier, to: content, in: registry) else { continue }
                if best.map({ distance < $0.distance }) ?? true { best = (document, distance) }
            }
        }
        return best?.document
    }

    /// What to do with a file claimed by `document` (`folder` when it is a folder or a
    /// package), or `nil` when its role opens nothing.
    ///
    /// | role | files | folders |
    /// |---|---|---|
    /// | `Viewer` | open in place: viewing needs no copy | import a copy |
    /// | `Editor` | open in place when `supportsOpeningDocumentsInPlace` is true, else import a copy to edit | import a copy |
    /// | `Shell`, `QLGenerator`, `None` | — | — |
    ///
    /// Folders are always copied: a bookmark holds one file.
    public func handling(of document: DocumentType, folder: Bool) -> DocumentHandling? {
        switch document.role {
        case "Viewer": folder ? .importCopy : .openInPlace
        case "Editor": !folder && supportsOpeningDocumentsInPlace == true ? .openInPlace : .importCopy
        default: nil
        }
    }

    /// Conformance steps from `identifier` up to `parent`, or `nil` when it does not conform.
    static func distance(from identifier: String, to parent: String, in registry: TypeRegistry) -> Int? {
        var frontier = [identifier]
        var seen: Set<String> = [identifier]
        var steps = 0
        while !frontier.isEmpty {
            if frontier.contains(parent) { return steps }
            frontier = frontier.flatMap { registry.type(withIdentifier: $0)?.conformsTo ?? [] }.filter { seen.insert($0).inserted }
            steps += 1
        }
        return nil
    }
}
