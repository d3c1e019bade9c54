import CofferBackends
public import CofferCore
import CofferRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What an edit changes: a file of a mount, or a host file opened in place (its bookmark).
public enum EditTarget: Sendable, Hashable, CustomStringConvertible {
    /// A file of a mount.
    case file(VirtualPath)
    /// A host file opened in place, by its bookmark's id (``OpenHostFile``).
    case bookmark(Int)

    /// How the audit log names it (never a host path).
    public var description: String {
        switch self {
        case .file(let path): path.description
        case .bookmark(let id): "bookmark:\(id)"
        }
    }
}

/// A private copy of a file being edited, for an editor program to change.
///
/// The copy is UTF-8 whatever the file's encoding (editors expect it), in its own folder
/// in the container's `tmp/` (mode 0700; the copy 0600) under the file's own name, so an
/// editor picks the right mode for it by its extension. Its line endings are the file's.
public struct EditDraft: Sendable {
    /// The file the copy is of.
    public let target: EditTarget
    /// The file's name.
    public let name: String
    /// The host path of the private copy, for the editor.
    public let draftPath: String
    /// The version that was copied; `nil` for a file that does not exist yet.
    public let version: FileVersion?
    /// How the text is written back: the file's own encoding and byte-order mark.
    public let form: TextForm
    /// The copy as it was made, to tell an editor that changed nothing.
    let original: [UInt8]

    /// Whether the file did not exist when the copy was made: saving creates it.
    public var isNew: Bool { version == nil }
}

/// What to do with an edited copy.
public enum EditChoice: String, Sendable, Hashable, CaseIterable {
    /// Save over the version that was copied (`changedSinceRead` if it changed since).
    case save
    /// Save over whatever is there now (it goes to the trash).
    case overwrite
    /// Save beside it under a new name (`notes (2).md`).
    case keepBoth
    /// Save it in `files:/Recovered`, leaving the file alone.
    case keepInFiles
    /// Throw the edited copy away.
    case discard
}

/// What finishing an edit did.
public enum EditOutcome: Sendable, Hashable {
    /// The copy was not changed: nothing was saved.
    case unchanged
    /// The copy was thrown away.
    case discarded
    /// Saved at `location` (a virtual path, or a host path for a host file), in `form`.
    case saved(location: String, form: TextForm)
}

extension FileService {
    /// The largest file an edit copies (it is held in memory to be converted).
    public static let editLimit = 64 << 20

    /// Makes the private copy of `target` for an editor. A sandbox file that does not exist
    /// yet gives an empty copy (saving creates it); one that is not text is refused.
    func beginEdit(_ target: EditTarget, policy: HostAccessPolicy) async throws(CofferError) -> EditDraft {
        let (name, bytes, version) = try await editedContent(of: target, policy: policy)
        guard let form = bytes.isEmpty ? .utf8 : TextForm(of: bytes, isComplete: true) else {
            throw CofferError(.unsupported, path: target.path, detail: "not-text")
        }
        let body = Array(bytes.dropFirst(form.byteOrderMarkLength))
        var decoder = StreamingTextDecoder(charset: form.charset)
        let text = form.charset == .utf8 ? body : Array(decoder.decode(body, isFinal: true).utf8)
        let draftPath = try await BlockingIO.run { [temporaryPath = host.draftsPath] _ throws(CofferError) -> String in
            guard let temporaryPath else { throw CofferError(.unsupported, detail: "edit") }
            return try Self.writeDraft(text, named: name, in: temporaryPath)
        }
        return EditDraft(target: target, name: name, draftPath: draftPath, version: version, form: form, original: text)
    }

    /// Saves the edited copy as `choice` says and removes it, or removes it unsaved
    /// (``EditChoice/discard``, or a copy the editor did not change). When saving fails —
    /// the file changed meanwhile (`changedSinceRead`), a character does not fit the file's
    /// encoding (`notEncodable`), anything else — the copy stays for another choice.
    func finishEdit(_ draft: EditDraft, choice: EditChoice, policy: HostAccessPolicy) async throws(CofferError) -> EditOutcome {
        let draftPath = draft.draftPath
        if choice == .discard {
            Self.removeDraft(at: draftPath)
            return .discarded
        }
        let edited = try await BlockingIO.run { _ throws(CofferError) in try Self.readDraft(at: draftPath, path: draft.target.path) }
        if edited == draft.original && (choice == .save || draft.isNew) {
            Self.removeDraft(at: draftPath)
            return .unchanged
        }
        // Kept in files: as the editor left it (UTF-8): what could not be saved in the file's
        // own encoding is never lost for that.
        if choice == .keepInFiles {
            let location = try await saveInRecovered(edited, named: draft.name).path.description
            Self.removeDraft(at: draftPath)
            return .saved(location: location, form: .utf8)
        }
        let bytes = try draft.form.encode(utf8: edited, path: draft.target.path)
        let location: String
        switch (draft.target, choice) {
        case (_, .keepInFiles), (_, .discard):
            preconditionFailure("handled above")
        case (.file(let path), .save) where draft.isNew:
            do {
                location = try await writeFile(path, bytes: bytes, conflict: .fail).path.description
            } catch where error.kind == .fileExists {
                // Made by someone else while this was edited.
                throw CofferError.changedSinceRead(path, now: try? await stat(path))
            }
        case (.file(let path), .save):
            location = try await writeFile(path, bytes: bytes, conflict: .replace, ifVersion: draft.version).path.description
        case (.file(let path), .overwrite):
            location = try await writeFile(path, bytes: bytes, conflict: .replace).path.description
        case (.file(let path), .keepBoth):
            location = try await writeFile(path, bytes: bytes, conflict: .keepBoth).path.description
        case (.bookmark(let id), .save):
            location = try await saveHostFile(id, bytes: bytes, mode: .replace(ifVersion: draft.version), policy: policy).savedPath
        case (.bookmark(let id), .overwrite):
            location = try await saveHostFile(id, bytes: bytes, mode: .replace(ifVersion: nil), policy: policy).savedPath
        case (.bookmark(let id), .keepBoth):
            location = try await saveHostFile(id, bytes: bytes, mode: .keepBoth, policy: policy).savedPath
        }
        Self.removeDraft(at: draftPath)
        return .saved(location: location, form: draft.form)
    }

    /// Writes `bytes` as the content of a bookmarked host file (``HostBookmark/save(_:mode:policy:trash:)``)
    /// and keeps the bookmark pointing at the saved file. What it replaced is noted for the
    /// audit entry (`desktop:ID`).
    func saveHostFile(_ bookmarkID: Int, bytes: [UInt8], mode: HostSaveMode,
                      policy: HostAccessPolicy) async throws(CofferError) -> HostSaveResult {
        let trash = host.trash
        let result = try await updatingBookmarks(policy) { bookmarks, policy throws(CofferError) in
            guard let index = bookmarks.firstIndex(where: { $0.id == bookmarkID }) else {
                throw CofferError(.noSuchFile, detail: "bookmark \(bookmarkID)")
            }
            let result = try bookmarks[index].save(bytes, mode: mode, policy: policy, trash: trash)
            bookmarks[index] = result.bookmark
            return result
        }
        if let id = result.trashedID { ReplacedItems.current?.add("desktop:" + id) }
        return result
    }

    /// Up to `length` bytes of a bookmarked host file from `offset`, with its version.
    func readBookmark(_ bookmarkID: Int, offset: Int64, length: Int,
                      policy: HostAccessPolicy) async throws(CofferError) -> ByteRange {
        try await withAccess(to: bookmarkID, policy: policy) { access in
            let bytes = try await access.read(offset: offset, length: length)
            return ByteRange(bytes: bytes, offset: offset, size: access.size,
                             isEndOfFile: offset + Int64(bytes.count) >= access.size, version: access.version)
        }
    }

    /// The name, bytes and version of what an edit starts from.
    private func editedContent(of target: EditTarget,
                               policy: HostAccessPolicy) async throws(CofferError) -> (String, [UInt8], FileVersion?) {
        switch target {
        case .file(let path):
            let node: FileNode
            do {
                node = try await stat(path)
            } catch where error.kind == .noSuchFile {
                // A new file: its folder must be there, and the mount writable.
                _ = try writableMount(for: path)
                guard let parent = path.parent, try await stat(parent).kind != .file else {
                    throw CofferError(.noSuchFile, path: path)
                }
                return (path.name, [], nil)
            }
            try node.requireReadableFile()
            _ = try writableMount(for: path)
            guard node.size <= Self.editLimit else { throw CofferError(.tooLarge, path: path, detail: "\(Self.editLimit) bytes") }
            let range = try await readBytes(path, offset: 0, length: Int(node.size) + 1)
            return (path.name, range.bytes, range.version)
        case .bookmark(let id):
            return try await withAccess(to: id, policy: policy) { access in
                guard access.size <= Int64(Self.editLimit) else {
                    throw CofferError(.tooLarge, detail: "\(Self.editLimit) bytes")
                }
                var bytes: [UInt8] = []
                while true {
                    let chunk = try await access.read(offset: Int64(bytes.count), length: 1 << 20)
                    if chunk.isEmpty || bytes.count > Self.editLimit { break }
                    bytes += chunk
                }
                return ((access as? HostFileAccess)?.bookmark.name ?? "edit", bytes, access.version)
            }
        }
    }

    /// Makes `tmp/edit-XXXXXX/NAME` (0700, 0600) holding `text`; returns its path.
    private static func writeDraft(_ text: [UInt8], named name: String, in temporaryPath: String) throws(CofferError) -> String {
        var template = Array((temporaryPath + "/edit-XXXXXX").utf8CString)
        guard let folder = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }).map({ String(cString: $0) }) else {
            throw CofferError.lastSystemError("mkdtemp", path: nil)
        }
        let path = folder + "/" + name
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let error = CofferError.lastSystemError("open", path: nil)
            rmdir(folder)
            throw error
        }
        defer { close(fd) }
        var done = 0
        while done < text.count {
            let wrote = text[done...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard wrote > 0 else {
                let error = CofferError.lastSystemError("write", path: nil)
                removeDraft(at: path)
                throw error
            }
            done += wrote
        }
        return path
    }

    private static func readDraft(at path: String, path virtual: VirtualPath?) throws(CofferError) -> [UInt8] {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CofferError.lastSystemError("open", path: virtual) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw CofferError.lastSystemError("read", path: virtual) }
            if count == 0 { return bytes }
            bytes += buffer[..<count]
            guard bytes.count <= 2 * editLimit else { throw CofferError(.tooLarge, path: virtual, detail: "\(2 * editLimit) bytes") }
        }
    }

    /// Removes a draft and its folder (with what an editor left there: a backup, a swap file).
    static func removeDraft(at path: String) {
        let folder = (path as NSString).deletingLastPathComponent
        try? FileManager.default.removeItem(atPath: folder)
    }
}

extension EditTarget {
    /// The virtual path, for a sandbox file.
    public var path: VirtualPath? {
        if case .file(let path) = self { return path }
        return nil
    }
}
