import Foundation

/// What is wrong with a manifest: errors stop the Info.plist generator before it writes
/// anything; warnings are printed and do not.
public struct ManifestValidation: Sendable, Equatable {
    /// What makes the manifest unusable, one sentence each.
    public var errors: [String] = []
    /// What is allowed but probably a mistake, one sentence each.
    public var warnings: [String] = []

    /// Whether there are no errors.
    public var isValid: Bool { errors.isEmpty }
}

extension DocumentTypesManifest {
    /// The values a document type's ``DocumentType/role`` may take.
    public static let roles = ["Editor", "Viewer", "Shell", "QLGenerator", "None"]
    /// The values a document type's ``DocumentType/rank`` may take.
    public static let ranks = ["Owner", "Default", "Alternate", "None"]

    /// Checks every rule the systems and App Store Connect apply, against `registry` (the
    /// system types). Each message names the entry (`documentTypes[0] “PDF Document”`) and
    /// the rule it breaks.
    public func validate(against registry: TypeRegistry = .standard) -> ManifestValidation {
        var result = ManifestValidation()
        let extended = self.registry(extending: registry)
        let exported = Set(exportedTypes.map(\.identifier))

        if !documentTypes.isEmpty && supportsOpeningDocumentsInPlace == nil && supportsDocumentBrowser != true {
            result.errors.append(
                "documentTypes: an app with document types must set supportsOpeningDocumentsInPlace (true or false) "
                + "or supportsDocumentBrowser: true; App Store Connect rejects it otherwise (ITMS-90737)")
        }

        for (index, document) in documentTypes.enumerated() {
            let entry = "documentTypes[\(index)] “\(document.name)”"
            if document.name.trimmingCharacters(in: .whitespaces).isEmpty {
                result.errors.append("\(entry): name must not be empty")
            }
            if !Self.roles.contains(document.role) {
                result.errors.append("\(entry): role “\(document.role)” must be one of \(Self.roles.joined(separator: ", "))")
            }
            if !Self.ranks.contains(document.rank) {
                result.errors.append("\(entry): rank “\(document.rank)” must be one of \(Self.ranks.joined(separator: ", "))")
            }
            if document.contentTypes.isEmpty {
                result.errors.append("\(entry): contentTypes must name at least one type")
            }
            for type in document.contentTypes {
                if !Self.isValidIdentifier(type) {
                    result.errors.append("\(entry): content type “\(type)” may contain only letters, digits, “-” and “.”")
                } else if extended.type(withIdentifier: type) == nil {
                    result.errors.append("\(entry): content type “\(type)” is not a system type nor declared in this manifest")
                }
                if document.rank == "Owner" && !exported.contains(type) {
                    result.warnings.append("\(entry): rank Owner on “\(type)”, which this app does not export; "
                                           + "Owner is for the app that defines the type")
                }
            }
        }

        var seen: [String: String] = [:]
        for (list, types) in [("exportedTypes", exportedTypes), ("importedTypes", importedTypes)] {
            for (index, declared) in types.enumerated() {
                let entry = "\(list)[\(index)] “\(declared.identifier)”"
                if !Self.isValidIdentifier(declared.identifier) {
                    result.errors.append("\(entry): identifier may contain only letters, digits, “-” and “.”")
                }
                if let earlier = seen[declared.identifier] {
                    result.errors.append(earlier == list
                        ? "\(entry): declared twice in \(list)"
                        : "\(entry): declared in both exportedTypes and importedTypes")
                }
                seen[declared.identifier] = list
                if let system = registry.type(withIdentifier: declared.identifier), system.isSystem {
                    result.errors.append("\(entry): is a system type; do not declare it again, name it in contentTypes")
                }
                if declared.description.trimmingCharacters(in: .whitespaces).isEmpty {
                    result.errors.append("\(entry): description must not be empty")
                }
                for ext in declared.extensions {
                    if ext.hasPrefix(".") {
                        result.errors.append("\(entry): extension “\(ext)” must be written without the leading dot")
                    } else if ext.isEmpty || ext.contains("/") || ext.contains(where: \.isWhitespace) {
                        result.errors.append("\(entry): extension “\(ext)” is not a file name extension")
                    }
                }
                for mime in declared.mimeTypes where !mime.contains("/") {
                    result.errors.append("\(entry): MIME type “\(mime)” must look like type/subtype")
                }
                for parent in declared.conformsTo where extended.type(withIdentifier: parent) == nil {
                    result.errors.append("\(entry): conforms to “\(parent)”, which is not a system type nor declared here")
                }
                let data = FileType.Identifier.data, package = FileType.Identifier.package
                if !extended.conforms(declared.identifier, to: data) && !extended.conforms(declared.identifier, to: package) {
                    result.errors.append("\(entry): must conform, directly or through its parents, to \(data) or \(package); "
                                         + "otherwise the system never binds files to it")
                }
                for (position, rule) in (declared.magic ?? []).enumerated() {
                    result.errors += Self.problems(with: rule, in: "\(entry) magic[\(position)]")
                }
                for language in (declared.localizedDescriptions ?? [:]).keys where !Self.isLanguageTag(language) {
                    result.errors.append("\(entry): localizedDescriptions key “\(language)” is not a language tag such as zh-Hans")
                }
            }
        }
        if let application { result.errors += desktopProblems(application, registry: extended) }
        return result
    }

    /// What keeps the desktop entry and the MIME package from being written: the entry's
    /// fields, and every type they name needing a MIME type.
    private func desktopProblems(_ application: Application, registry: TypeRegistry) -> [String] {
        var errors: [String] = []
        let idOK = !application.id.isEmpty && !application.id.hasPrefix(".") && application.id.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_.".unicodeScalars.contains(scalar))
        }
        if !idOK { errors.append("application: id “\(application.id)” may contain only letters, digits, “-”, “_” and “.”") }
        if application.name.trimmingCharacters(in: .whitespaces).isEmpty { errors.append("application: name must not be empty") }
        if application.exec.trimmingCharacters(in: .whitespaces).isEmpty { errors.append("application: exec must not be empty") }
        if application.exec.contains("%") { errors.append("application: exec must not hold field codes; “ %F” is added") }
        if application.categories.isEmpty { errors.append("application: categories must name at least one category") }
        for category in application.categories where category.isEmpty || category.contains(";") || category.contains(where: \.isWhitespace) {
            errors.append("application: category “\(category)” is not a category name")
        }
        for language in Array((application.localizedNames ?? [:]).keys) + Array((application.localizedComments ?? [:]).keys)
        where !Self.isLanguageTag(language) {
            errors.append("application: “\(language)” is not a language tag such as zh-Hans")
        }
        for (index, document) in documentTypes.enumerated() {
            for type in document.contentTypes
            where registry.type(withIdentifier: type) != nil && registry.mimeTypes(standingFor: type).isEmpty {
                errors.append("documentTypes[\(index)] “\(document.name)”: content type “\(type)” has no MIME type, "
                              + "nor does any type that conforms to it, so the desktop entry cannot name it; declare one, or name a type that has one")
            }
        }
        for (index, declared) in exportedTypes.enumerated() where declared.mimeTypes.isEmpty {
            errors.append("exportedTypes[\(index)] “\(declared.identifier)”: has no MIME type, which shared-mime-info needs")
        }
        return errors
    }

    private static func problems(with rule: ContentMagic, in entry: String) -> [String] {
        var errors: [String] = []
        if !ContentMagic.types.contains(rule.type) {
            errors.append("\(entry): type “\(rule.type)” must be one of \(ContentMagic.types.joined(separator: ", "))")
        }
        if rule.offsets == nil {
            errors.append("\(entry): offset “\(rule.offset)” must be a byte offset or a range like 0:64")
        }
        if rule.value.isEmpty {
            errors.append("\(entry): value must not be empty")
        } else if ContentMagic.types.contains(rule.type), rule.bytes == nil {
            errors.append("\(entry): value “\(rule.value)” is not a number that fits a \(rule.type)")
        }
        return errors
    }

    /// `en`, `zh-Hans`, `pt-BR`: letters, then subtags of letters or digits.
    static func isLanguageTag(_ tag: String) -> Bool {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter }) else { return false }
        return parts.dropFirst().allSatisfy { (2...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }

    /// Letters, digits, `-` and `.` only (ASCII), and not empty.
    static func isValidIdentifier(_ identifier: String) -> Bool {
        !identifier.isEmpty && identifier.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-" || scalar == ".")
        }
    }
}
