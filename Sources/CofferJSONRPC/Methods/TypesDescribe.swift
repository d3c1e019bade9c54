import FileService
import CofferCore

/// `types/describe`: a type by identifier, or a file's type by path (with what its
/// content says under `detected`).
struct TypesDescribe: RPCMethod {
    static let name = "types/describe"
    struct Params: Decodable, Sendable { var identifier: String?; var path: PathParam? }
    struct Detected: Encodable, Sendable {
        var byName: String
        var byContent: String?
        var mimeType: String?
        var mismatch: Bool
    }
    struct Result: Encodable, Sendable {
        var identifier: String
        var description: String
        var conformsTo: [String]
        var extensions: [String]
        var mimeTypes: [String]
        var isPackage: Bool
        var detected: Detected?
    }

    static func run(_ params: Params, _ context: RequestContext) async throws -> Result {
        let registry = context.service.registry
        var detected: Detected?
        let identifier: String
        switch (params.identifier, params.path) {
        case (let id?, nil):
            identifier = id
        case (nil, let path?):
            let assessment = try await context.perform(AssessType(try path.resolved()))
            identifier = assessment.effective
            detected = Detected(byName: assessment.byName, byContent: assessment.byContent,
                                mimeType: assessment.contentMIMEType, mismatch: assessment.isMismatch)
        default:
            throw RPCError.invalidParams("give exactly one of the params “identifier” and “path”")
        }
        guard let type = registry.type(withIdentifier: identifier) else {
            throw RPCError.invalidParams("param “identifier”: no type “\(identifier)” is known")
        }
        return Result(identifier: type.id, description: type.name(in: context.language),
                      conformsTo: registry.supertypes(of: type.id).subtracting([type.id]).sorted(),
                      extensions: type.extensions, mimeTypes: type.mimeTypes,
                      isPackage: registry.isPackageType(type.id), detected: detected)
    }
}
