import Foundation

/// Tags on items, in the Linux desktop's convention: the `user.xdg.tags` extended attribute, a
/// comma-separated list (what Dolphin, Caja and tag tools read and write).
public enum FileTags {
    /// The attribute's name.
    public static let attribute = "user.xdg.tags"

    /// The tags an attribute value holds: split at commas, trimmed, empty ones and repeats
    /// left out, in their order.
    public static func parse<Bytes: Collection<UInt8>>(_ value: Bytes) -> [String] {
        var tags: [String] = []
        for part in String(decoding: value, as: UTF8.self).split(separator: ",") {
            let tag = part.trimmingCharacters(in: .whitespacesAndNewlines.union(.init(charactersIn: "\0")))
            if !tag.isEmpty && !tags.contains(tag) { tags.append(tag) }
        }
        return tags
    }

    /// The attribute value for `tags`.
    public static func format(_ tags: [String]) -> [UInt8] { Array(tags.joined(separator: ",").utf8) }

    /// `tags` with `added` (at the end, when not there yet) and without `removed`.
    public static func changing(_ tags: [String], adding added: [String], removing removed: [String]) -> [String] {
        var result = tags.filter { !removed.contains($0) }
        for tag in added where !result.contains(tag) && !removed.contains(tag) { result.append(tag) }
        return result
    }

    /// Refuses a tag that cannot be written as one: empty, with a comma or a control
    /// character, or over 255 bytes.
    public static func check(_ tag: String) throws(CofferError) {
        let trimmed = tag.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed == tag, !tag.contains(","), tag.utf8.count <= 255,
              !tag.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw CofferError(.invalidArgument, detail: "tag “\(tag)”: a tag is a word or words without commas") }
    }
}

/// A backend whose items carry tags (``FileTags``).
///
/// With it, `tag`, `files/tags`, the tag filter of searches and the web page's tags work on the
/// mount, and the search index records each item's tags. Without it, an item has no tags and
/// changing them fails with `unsupported`.
public protocol TaggingBackend: StorageBackend {
    /// The tags of the item at `path` (none: empty), in their order.
    /// - Throws: `noSuchFile` when there is no such item; `noPermission`, `ioError` from the store.
    func tags(at path: VirtualPath) async throws -> [String]
    /// Replaces the tags of the item at `path` (empty removes the attribute). The item's
    /// content is not changed.
    /// - Throws: `noSuchFile` when there is no such item; `unsupported` for an item that cannot
    ///   carry tags (a folder on S3); `readOnly`, `noPermission`, `ioError` from the store;
    ///   `changedSinceRead` when a store that rewrites the item finds it changed meanwhile.
    func setTags(_ tags: [String], at path: VirtualPath) async throws
    /// The tags of the items `names` in the folder at `folder`, in their order (none for one
    /// that cannot be read): how a search index reads a whole folder's.
    func tags(ofItems names: [String], inFolderAt folder: VirtualPath) async -> [[String]]
}

extension TaggingBackend {
    public func tags(ofItems names: [String], inFolderAt folder: VirtualPath) async -> [[String]] {
        var all: [[String]] = []
        for name in names {
            all.append((try? await tags(at: folder.appending(trustedName: name))) ?? [])
        }
        return all
    }
}
