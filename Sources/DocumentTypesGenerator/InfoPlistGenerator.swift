public import CofferCore
public import Foundation

/// Turns a ``DocumentTypesManifest`` into Info.plist entries, merged into an existing
/// Info.plist, written as an XML property list by `PropertyListSerialization`.
///
/// Only the keys listed in ``ownedKeys`` are the generator's: they are replaced (or
/// removed when the manifest has nothing for them); every other key of the file is kept.
/// The output is deterministic: the same manifest and file give the same bytes.
public enum InfoPlistGenerator {
    public static let ownedKeys = [
        "CFBundleDocumentTypes", "UTExportedTypeDeclarations", "UTImportedTypeDeclarations",
        "LSSupportsOpeningDocumentsInPlace", "UIFileSharingEnabled", "UISupportsDocumentBrowser",
    ]

    public typealias Failure = GenerationFailure

    /// The generator's keys for `manifest`, as property-list values.
    public static func entries(for manifest: DocumentTypesManifest) -> [String: Any] {
        var entries: [String: Any] = [:]
        if !manifest.documentTypes.isEmpty {
            entries["CFBundleDocumentTypes"] = manifest.documentTypes.map { document -> [String: Any] in
                var entry: [String: Any] = [
                    "CFBundleTypeName": document.name,
                    "CFBundleTypeRole": document.role,
                    "LSHandlerRank": document.rank,
                    "LSItemContentTypes": document.contentTypes,
                ]
                if let isPackage = document.isPackage { entry["LSTypeIsPackage"] = isPackage }
                if let icons = document.iconFiles { entry["CFBundleTypeIconFiles"] = icons }
                return entry
            }
        }
        if !manifest.exportedTypes.isEmpty {
            entries["UTExportedTypeDeclarations"] = manifest.exportedTypes.map(declaration)
        }
        if !manifest.importedTypes.isEmpty {
            entries["UTImportedTypeDeclarations"] = manifest.importedTypes.map(declaration)
        }
        if let value = manifest.supportsOpeningDocumentsInPlace { entries["LSSupportsOpeningDocumentsInPlace"] = value }
        if let value = manifest.fileSharingEnabled { entries["UIFileSharingEnabled"] = value }
        if let value = manifest.supportsDocumentBrowser { entries["UISupportsDocumentBrowser"] = value }
        return entries
    }

    private static func declaration(_ declared: DocumentTypesManifest.DeclaredType) -> [String: Any] {
        var tags: [String: Any] = [:]
        if !declared.extensions.isEmpty { tags["public.filename-extension"] = declared.extensions }
        if !declared.mimeTypes.isEmpty { tags["public.mime-type"] = declared.mimeTypes }
        var entry: [String: Any] = [
            "UTTypeIdentifier": declared.identifier,
            "UTTypeDescription": declared.description,
            "UTTypeConformsTo": declared.conformsTo,
        ]
        if !tags.isEmpty { entry["UTTypeTagSpecification"] = tags }
        if let icons = declared.iconFiles { entry["UTTypeIconFiles"] = icons }
        if let url = declared.referenceURL { entry["UTTypeReferenceURL"] = url }
        return entry
    }

    /// The Info.plist for `manifest`, merged into `existing` (the current file, if any).
    /// - Throws: ``Failure/invalidManifest(_:)`` before producing anything when the
    ///   manifest breaks a rule; ``Failure/unreadableOutput(_:)`` when `existing` is not a
    ///   property-list dictionary (it is never overwritten then).
    public static func render(_ manifest: DocumentTypesManifest, existing: Data?,
                              registry: TypeRegistry = .standard) throws(Failure) -> Data {
        let validation = manifest.validate(against: registry)
        guard validation.isValid else { throw .invalidManifest(validation.errors) }
        var plist = try dictionary(from: existing)
        for key in ownedKeys { plist.removeValue(forKey: key) }
        plist.merge(entries(for: manifest)) { _, new in new }
        do {
            return try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
        } catch {
            throw .unreadableOutput("the property list could not be written: \(error)")
        }
    }

    /// What `--check` reports: empty when `existing` is exactly what ``render`` gives,
    /// else the owned keys that differ (or why the file as a whole does).
    public static func differences(_ manifest: DocumentTypesManifest, existing: Data?,
                                   registry: TypeRegistry = .standard) throws(Failure) -> [String] {
        let expected = try render(manifest, existing: existing, registry: registry)
        guard let existing else { return ["the output file does not exist"] }
        if existing == expected { return [] }
        let current = try dictionary(from: existing)
        let wanted = try dictionary(from: expected)
        let keys = ownedKeys.filter { key in
            !NSDictionary(dictionary: [key: current[key] ?? NSNull()]).isEqual(to: [key: wanted[key] ?? NSNull()])
        }
        return keys.isEmpty ? ["the file is not in the generator's XML format (regenerate it)"]
                            : keys.map { "\($0) is out of date" }
    }

    private static func dictionary(from data: Data?) throws(Failure) -> [String: Any] {
        guard let data, !data.isEmpty else { return [:] }
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw .unreadableOutput("the existing file is not a property list: \(error.localizedDescription)")
        }
        guard let dictionary = object as? [String: Any] else {
            throw .unreadableOutput("the existing property list does not have a dictionary at its top")
        }
        return dictionary
    }
}
