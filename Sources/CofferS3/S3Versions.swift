public import CofferCore
import CofferRuntime
import Foundation

/// The versions of the bucket's files, kept in the bucket: nothing crosses the network.
///
/// - Where the bucket's versioning is on, the bucket itself keeps what a `PUT` replaces as
///   an older version of the object: keeping one is a `HEAD` that notes the object's
///   version ID, and reading, restoring or deleting it names that ID. Coffer's pruning deletes
///   only the older versions it noted, never the current one.
/// - Otherwise (never set, or suspended) the object is copied on the server to
///   `.Versions-UID/ID/NAME` at the top of the bucket, beside its trash and hidden the same way.
///
/// A location is `version ID KEY` or `copy KEY`.
extension S3Backend: VersionKeepingBackend {
    /// `.Versions-UID/`, at the top of the bucket.
    var versionsPrefix: String { ".Versions-\(getuid())/" }

    /// What a mount of the whole bucket does not show at its top: the trash and the versions.
    var hiddenAtTop: Set<String> {
        prefix.isEmpty ? [String(trashPrefix.dropLast()), String(versionsPrefix.dropLast())] : []
    }

    /// Where a version is.
    enum VersionLocation: Equatable {
        /// The bucket's own older version of the object at `key`.
        case version(id: String, key: String)
        /// A copy at `key`.
        case copy(key: String)

        init?(_ text: String) {
            if text.hasPrefix("copy ") {
                self = .copy(key: String(text.dropFirst(5)))
            } else if text.hasPrefix("version "), let space = text.dropFirst(8).firstIndex(of: " ") {
                self = .version(id: String(text[text.index(text.startIndex, offsetBy: 8)..<space]),
                                key: String(text[text.index(after: space)...]))
            } else {
                return nil
            }
        }

        var text: String {
            switch self {
            case .version(let id, let key): "version \(id) \(key)"
            case .copy(let key): "copy \(key)"
            }
        }
    }

    public func keepVersion(of path: VirtualPath) async throws(CofferError) -> String {
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) -> String in
            let key = self.key(path)
            guard let object = try self.client.head(key) else {
                throw CofferError(try self.isFolder(path) ? .isADirectory : .noSuchFile, path: path)
            }
            // An object from before versioning was turned on (`null`) would be overwritten
            // if versioning were suspended meanwhile: it is copied.
            if let id = object.versionID, id != "null", self.client.keepsVersions() {
                return VersionLocation.version(id: id, key: key).text
            }
            var random = SystemRandomNumberGenerator()
            let folder = String((0..<16).map { _ in "0123456789abcdef".randomElement(using: &random)! })
            let copy = self.versionsPrefix + folder + "/" + (key.split(separator: "/").last.map(String.init) ?? "file")
            do throws(CofferError) {
                try self.copyObject(from: key, to: copy, size: object.size)
            } catch {
                try? self.client.delete(copy)
                throw error.path == nil ? error.naming(path) : error
            }
            return VersionLocation.copy(key: copy).text
        }
    }

    public func discardKeptVersion(_ location: String) async throws(CofferError) {
        // The bucket's own version is still the object's current content: it stays.
        guard case .copy(let key)? = VersionLocation(location) else { return }
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in try self.client.delete(key) }
    }

    public func openVersion(_ location: String) async throws(CofferError) -> any ReadableFile {
        let missing = CofferError(.noSuchFile, detail: "no-version")
        guard let place = VersionLocation(location) else { throw missing }
        return try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) -> any ReadableFile in
            let (key, id): (String, String?) = switch place {
            case .version(let id, let key): (key, id)
            case .copy(let key): (key, nil)
            }
            let object: S3Object?
            do throws(CofferError) {
                object = try self.client.head(key, versionID: id)
            } catch where error.kind == .invalidArgument {
                object = nil  // an ID the bucket does not know
            }
            guard let object else { throw missing }
            let path = VirtualPath.root(of: "versions").appending(trustedName: key.split(separator: "/").last.map(String.init) ?? "file")
            return S3ReadableFile(client: self.client, key: key, path: path, size: object.size, etag: object.etag, versionID: id,
                                  attributes: S3Attributes.attributes(from: object.metadata), transfers: self.transfers, cache: nil)
        }
    }

    public func deleteVersion(_ location: String) async throws(CofferError) {
        guard let place = VersionLocation(location) else { return }
        try await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) in
            switch place {
            case .copy(let key):
                try self.client.delete(key)
            case .version(let id, let key):
                // Never the object's current content (a keep whose replace never happened).
                if try self.client.head(key)?.versionID == id { return }
                try self.client.delete(key, versionID: id)
            }
        }
    }

    public func currentContents(among locations: [String]) async -> Set<String> {
        var byKey: [String: [(location: String, id: String)]] = [:]
        for location in locations {
            if case .version(let id, let key)? = VersionLocation(location) { byKey[key, default: []].append((location, id)) }
        }
        guard !byKey.isEmpty else { return [] }
        let asked = byKey
        // One `HEAD` per key, however many versions name it.
        return (try? await BlockingIO.run(waitingOnNetwork: true) { _ throws(CofferError) -> Set<String> in
            var current: Set<String> = []
            for (key, named) in asked {
                guard let id = try self.client.head(key)?.versionID else { continue }
                current.formUnion(named.filter { $0.id == id }.map(\.location))
            }
            return current
        }) ?? []
    }
}
