import CofferDesktop
import CofferCore
import CofferREPL
import CofferRuntime
import DocumentTypesGenerator
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `install-desktop` and `uninstall-desktop`: the application's desktop entry and
/// shared-mime-info package, made from its manifest, put where a desktop looks for a user's
/// own (`$XDG_DATA_HOME/applications`, `$XDG_DATA_HOME/mime/packages`), and taken away again.
///
/// What was installed is written down in `$XDG_STATE_HOME/<program>/desktop-install.json`,
/// each file with its identity (device, inode, size, time), so uninstalling removes exactly
/// those files, and only while they are still what was installed. A file of the same name
/// that was not installed this way is never overwritten. The types the application opens
/// only as an alternative (rank `Alternate`) are offered in the user's `mimeapps.list`
/// instead of `MimeType=`, after the applications that open them now (``MimeAppsList``), and
/// taken out again on uninstalling. `update-mime-database` and `update-desktop-database` are
/// run afterwards when they are on `PATH`.
struct DesktopInstaller {
    let program: String
    let manifest: DocumentTypesManifest
    let registry: TypeRegistry
    /// The words of `Exec=` before `%F`.
    let command: [String]
    let environment: [String: String]
    let language: Language

    private var dataHome: String { BaseDirectories(environment: environment).dataHome }
    var receiptPath: String { "\(BaseDirectories(environment: environment).stateHome)/\(program)/desktop-install.json" }

    struct Receipt: Codable {
        var files: [InstalledFile]
        /// Per MIME type, the application `install-desktop` wrote ahead of this one in
        /// `mimeapps.list` (the type had no added association before), to take out with it.
        var placedFirst: [String: String]? = nil
        /// Whether `install-desktop` made the user's `mimeapps.list` (there was none): then
        /// `uninstall-desktop` removes it when nothing else is left in it.
        var madeMimeAppsList: Bool? = nil
    }

    /// A file as installed: where, and what identifies that very file.
    struct InstalledFile: Codable, Equatable {
        var path: String
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Double

        /// The file now at `path`, or `nil` when there is none.
        init?(path: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return nil }
            self.path = path
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        }
    }

    // MARK: Installing

    func install(output: TextOutput, errors: TextOutput) -> Int32 {
        defer {
            output.flush()
            errors.flush()
        }
        let files: DesktopFiles
        do {
            guard let made = try DesktopFiles.make(for: manifest, registry: registry, command: command) else {
                return fail(LocalizedText("the manifest describes no application (its “application” section), so there is nothing to install",
                                          "清单没有描述应用（缺少“application”部分），没有可安装的内容"), errors)
            }
            files = made
        } catch {
            return fail(LocalizedText("the manifest cannot be installed: \(error)", "清单无法安装：\(error)"), errors)
        }
        let previous = loadReceipt()?.files ?? []
        var targets = [(path: "\(dataHome)/applications/\(files.entryName)", data: files.entry)]
        if let package = files.mimePackage { targets.append(("\(dataHome)/mime/packages/\(files.mimePackageName)", package)) }

        // Never overwrite what this installer did not put there (or what changed since).
        for target in targets {
            if let present = InstalledFile(path: target.path), !previous.contains(present) {
                return fail(LocalizedText("“\(target.path)” exists and was not installed by \(program); it is left alone",
                                          "“\(target.path)”已存在，且不是由 \(program) 安装的；不会被改动"), errors)
            }
        }
        // Each file is written beside its place, recorded in the receipt with that very file's
        // identity (a rename keeps it), then renamed into place: however the installation is cut
        // short, every file it put in place is one the receipt names.
        var installed = previous
        for target in targets {
            let staged = ((target.path as NSString).deletingLastPathComponent as NSString)
                .appendingPathComponent(".\((target.path as NSString).lastPathComponent).installing")
            do {
                try FileManager.default.createDirectory(atPath: (target.path as NSString).deletingLastPathComponent,
                                                        withIntermediateDirectories: true)
                try target.data.write(to: URL(fileURLWithPath: staged))
                guard var file = InstalledFile(path: staged) else { throw CocoaError(.fileNoSuchFile) }
                file.path = target.path
                try record(installed + [file])  // the file it replaces stays named until it is replaced
                guard rename(staged, target.path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                installed.removeAll { $0.path == target.path }
                installed.append(file)
            } catch {
                _ = unlink(staged)
                return fail(LocalizedText("cannot install “\(target.path)”: \(error.localizedDescription)",
                                          "无法安装“\(target.path)”：\(error.localizedDescription)"), errors)
            }
            output.line(LocalizedText("Installed \(target.path)", "已安装 \(target.path)")(language))
        }
        // A file an earlier installation made that this one does not (a MIME package no longer needed).
        for old in previous where !targets.contains(where: { $0.path == old.path }) {
            if InstalledFile(path: old.path) == old { _ = unlink(old.path) }
            installed.removeAll { $0.path == old.path }
        }
        var placedFirst = loadReceipt()?.placedFirst ?? [:]
        let listExisted = FileManager.default.fileExists(atPath: MimeAppsList(environment: environment).path)
        let offered = offerAsAlternative(files.entryName, placedFirst: &placedFirst, output: output, errors: errors)
        let madeList = loadReceipt()?.madeMimeAppsList == true
            || (!listExisted && FileManager.default.fileExists(atPath: MimeAppsList(environment: environment).path))
        do {
            try record(installed, placedFirst: placedFirst, madeMimeAppsList: madeList)
        } catch {
            return fail(LocalizedText("cannot record the installation in “\(receiptPath)”: \(error.localizedDescription)",
                                      "无法在“\(receiptPath)”中记录安装：\(error.localizedDescription)"), errors)
        }
        let updated = updateDatabases(output: output, errors: errors)
        return offered != 0 ? offered : updated
    }

    /// Adds the entry to the user's `mimeapps.list` for the types it opens at rank
    /// `Alternate`, after the application the desktop opens each with now (``MimeAppsList``).
    private func offerAsAlternative(_ entryName: String, placedFirst: inout [String: String], output: TextOutput,
                                    errors: TextOutput) -> Int32 {
        let types = DesktopEntryGenerator.alternateMimeTypes(opened: manifest, registry: manifest.registry(extending: registry))
        guard !types.isEmpty else { return 0 }
        var list = MimeAppsList(environment: environment)
        var changed = false
        for type in types {
            let before = list.added(for: type)
            guard !before.contains(entryName) else { continue }
            let current = before.isEmpty ? currentDefault(for: type) : nil  // written first only where none was
            list.add(entryName, for: type, after: current)
            changed = true
            if let current, current != entryName { placedFirst[type] = current }
        }
        guard changed else { return 0 }
        do {
            try list.write()
        } catch {
            return fail(LocalizedText("cannot offer \(program) in “\(list.path)”: \(error.localizedDescription)",
                                      "无法在“\(list.path)”中添加 \(program)：\(error.localizedDescription)"), errors)
        }
        output.line(LocalizedText("Offered for \(types.count) more types in \(list.path), after the applications that open them now",
                                  "已在 \(list.path) 中为另外 \(types.count) 种类型添加，排在当前打开它们的应用之后")(language))
        return 0
    }

    /// The application the desktop opens `type` with now, as `xdg-mime` answers; `nil` when
    /// none does or `xdg-mime` is not installed.
    private func currentDefault(for type: String) -> String? {
        guard let executable = Self.find("xdg-mime", in: environment["PATH"] ?? "/usr/bin:/bin") else { return nil }
        let variables = environment.map { "\($0.key)=\($0.value)" }
        guard let answer = ChildProcess.output(of: [executable, "query", "default", type], environment: variables) else {
            return nil
        }
        let name = String(decoding: answer.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return answer.status == 0 && name.hasSuffix(".desktop") ? name : nil
    }

    private func record(_ files: [InstalledFile], placedFirst: [String: String]? = nil, madeMimeAppsList: Bool? = nil) throws {
        try FileManager.default.createDirectory(atPath: (receiptPath as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        let kept = placedFirst ?? loadReceipt()?.placedFirst
        let made = madeMimeAppsList ?? loadReceipt()?.madeMimeAppsList
        try JSONEncoder().encode(Receipt(files: files, placedFirst: kept, madeMimeAppsList: made)).write(to: URL(fileURLWithPath: receiptPath),
                                                                                   options: .atomic)
    }

    // MARK: Uninstalling

    func uninstall(output: TextOutput, errors: TextOutput) -> Int32 {
        defer {
            output.flush()
            errors.flush()
        }
        guard let receipt = loadReceipt() else {
            return fail(LocalizedText("nothing was installed (no record in “\(receiptPath)”)",
                                      "没有安装过任何内容（“\(receiptPath)”中没有记录）"), errors)
        }
        var keptBack = false
        var paths: [String] = []
        for file in receipt.files where !paths.contains(file.path) { paths.append(file.path) }
        for path in paths {
            switch InstalledFile(path: path) {
            case nil:
                continue  // already gone
            case let present? where receipt.files.contains(present):
                if unlink(path) == 0 {
                    output.line(LocalizedText("Removed \(path)", "已删除 \(path)")(language))
                } else {
                    errors.line("\(program): \(path): \(String(cString: strerror(errno)))")
                    keptBack = true
                }
            default:
                errors.line(LocalizedText("\(program): “\(path)” changed since it was installed; it is left alone",
                                          "\(program)：“\(path)”在安装后被改动过；不会被删除")(language))
                keptBack = true
            }
        }
        _ = unlink(receiptPath)
        var list = MimeAppsList(environment: environment)
        if let entry = paths.first(where: { $0.hasSuffix(".desktop") }),
           list.remove((entry as NSString).lastPathComponent, withWrittenFirst: receipt.placedFirst ?? [:]) {
            do {
                if receipt.madeMimeAppsList == true && list.isEmpty {
                    // Made by install-desktop and holding nothing now: it goes as it came.
                    guard unlink(list.path) == 0 || errno == ENOENT else { throw CofferError.lastSystemError("unlink", path: nil) }
                } else {
                    try list.write()
                }
                output.line(LocalizedText("Removed from \(list.path)", "已从 \(list.path) 中移除")(language))
            } catch {
                errors.line("\(program): \(list.path): \(error.localizedDescription)")
                keptBack = true
            }
        }
        let status = updateDatabases(output: output, errors: errors)
        return keptBack ? 1 : status
    }

    // MARK: Helpers

    private func loadReceipt() -> Receipt? {
        FileManager.default.contents(atPath: receiptPath).flatMap { try? JSONDecoder().decode(Receipt.self, from: $0) }
    }

    /// Runs `update-mime-database` and `update-desktop-database` on the user's folders, where
    /// they are installed; 1 if one fails.
    private func updateDatabases(output: TextOutput, errors: TextOutput) -> Int32 {
        var status: Int32 = 0
        let mime = "\(dataHome)/mime", applications = "\(dataHome)/applications"
        for (tool, folder, holding) in [("update-mime-database", mime, mime + "/packages"),
                                        ("update-desktop-database", applications, applications)]
        where Self.isFolder(holding) {
            guard let executable = Self.find(tool, in: environment["PATH"] ?? "/usr/bin:/bin") else {
                output.line(LocalizedText("(\(tool) is not installed; the desktop will notice the change on its own)",
                                          "（未安装 \(tool)；桌面会自行发现变化）")(language))
                continue
            }
            let ended: Int32
            do {
                // Its errors go where Coffer's own do.
                ended = try ChildProcess.start([executable, folder], standardError: .inherited).wait()
            } catch {
                errors.line("\(program): \(tool): \(error.localizedDescription)")
                status = 1
                continue
            }
            if ended == 0 {
                output.line(LocalizedText("Ran \(tool) \(folder)", "已运行 \(tool) \(folder)")(language))
            } else {
                errors.line("\(program): \(tool) \(folder) failed with status \(ended)")
                status = 1
            }
        }
        return status
    }

    private static func isFolder(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    static func find(_ tool: String, in path: String) -> String? {
        path.split(separator: ":").map { "\($0)/\(tool)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    private func fail(_ message: LocalizedText, _ errors: TextOutput) -> Int32 {
        errors.line("\(program): \(message(language))")
        return 1
    }
}
