public import CofferCore
public import Foundation

/// The files a Linux desktop needs from a manifest: `<id>.desktop` for `applications/`, and
/// `<id>.xml` for `mime/packages/` when the application exports types.
public struct DesktopFiles: Sendable {
    public var entryName: String
    public var entry: Data
    public var mimePackageName: String
    /// `nil` when the application exports no type.
    public var mimePackage: Data?

    /// The files, or `nil` when the manifest describes no application.
    /// - Parameter command: the `Exec=` words for an installed entry (see ``DesktopEntryGenerator``).
    public static func make(for manifest: DocumentTypesManifest, registry: TypeRegistry = .standard,
                            command: [String]? = nil) throws(GenerationFailure) -> DesktopFiles? {
        guard let application = manifest.application,
              let entry = try DesktopEntryGenerator.render(manifest, registry: registry, command: command)
        else {
            // Still refuse a broken manifest, application or not.
            let validation = manifest.validate(against: registry)
            guard validation.isValid else { throw .invalidManifest(validation.errors) }
            return nil
        }
        return DesktopFiles(entryName: application.id + ".desktop", entry: entry, mimePackageName: application.id + ".xml",
                            mimePackage: try SharedMimeInfoGenerator.render(manifest, registry: registry))
    }

    /// Each file's name and content.
    public var all: [(name: String, data: Data)] {
        [(entryName, entry)] + (mimePackage.map { [(mimePackageName, $0)] } ?? [])
    }
}
