import CofferCore
import CofferRuntime
public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The applications the desktop associates with a MIME type, as freedesktop.org's MIME
/// Applications Associations and Desktop Entry specifications define them — the lookup GLib's
/// `GAppInfo` (and so `gio mime`) makes:
///
/// - desktop entries in `$XDG_DATA_HOME/applications` and each `$XDG_DATA_DIRS/applications`
///   (an id found in an earlier folder hides the same id later); an entry that is `Hidden`,
///   `NoDisplay`-only is still listed, one whose `TryExec` or `Exec` program cannot be found,
///   or that is not an `Application`, is left out;
/// - `mimeapps.list` in `$XDG_CONFIG_HOME`, `$XDG_CONFIG_DIRS`, and the applications folders:
///   `[Default Applications]` picks the default, `[Added Associations]` adds, `[Removed
///   Associations]` takes away, earlier files first;
/// - a type's parents (`subclasses` of shared-mime-info: `text/x-csrc` is a `text/plain`) lend
///   theirs after its own.
public struct DesktopApplications: Sendable {
    public struct Application: Sendable, Hashable, Encodable {
        /// The desktop entry id (`org.gnome.TextEditor.desktop`).
        public var id: String
        public var name: String
        /// The `Exec` line, with its field codes.
        public var exec: String
        /// `Terminal=true`: it runs in a terminal.
        public var inTerminal: Bool
        public var isDefault: Bool

        enum CodingKeys: String, CodingKey { case id, name, isDefault = "default" }
    }

    let dataDirectories: [String]
    let configDirectories: [String]
    let environment: [String: String]

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let base = BaseDirectories(environment: environment)
        func list(_ variable: String, _ fallback: String) -> [String] {
            let value = environment[variable].flatMap { $0.isEmpty ? nil : $0 } ?? fallback
            return value.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        }
        dataDirectories = [base.dataHome] + list("XDG_DATA_DIRS", "/usr/local/share:/usr/share")
        configDirectories = [base.configHome] + list("XDG_CONFIG_DIRS", "/etc/xdg")
        self.environment = environment
    }

    /// Whether this process runs in a graphical session, where an application it starts appears
    /// on the user's screen.
    public static func hasGraphicalSession(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// The applications for `mimeType`, the default first.
    public func applications(for mimeType: String) -> [Application] {
        let entries = desktopEntries()
        let lists = mimeAppsLists()
        var ordered: [String] = []
        var defaultID: String?
        for type in [mimeType] + parents(of: mimeType) {
            var removed = Set<String>()
            for list in lists {
                if defaultID == nil {
                    defaultID = list.values("Default Applications", type).first { entries[$0] != nil && !removed.contains($0) }
                }
                for id in list.values("Added Associations", type) where entries[id] != nil && !removed.contains(id) {
                    if !ordered.contains(id) { ordered.append(id) }
                }
                removed.formUnion(list.values("Removed Associations", type))
            }
            for (id, entry) in entries.sorted(by: { $0.value.order < $1.value.order })
            where entry.mimeTypes.contains(type) && !removed.contains(id) && !ordered.contains(id) {
                ordered.append(id)
            }
        }
        if let defaultID {
            ordered.removeAll { $0 == defaultID }
            ordered.insert(defaultID, at: 0)
        }
        return ordered.enumerated().compactMap { index, id in
            entries[id].map {
                // Without a default named anywhere, the first is the desktop's default, as GLib has it.
                Application(id: id, name: $0.name, exec: $0.exec, inTerminal: $0.inTerminal, isDefault: index == 0)
            }
        }
    }

    /// The application `wanted` names among `applications`: its id, with or without `.desktop`,
    /// or its `Name` (any case).
    public static func pick(_ wanted: String, from applications: [Application]) -> Application? {
        let id = wanted.hasSuffix(".desktop") ? wanted : wanted + ".desktop"
        return applications.first { $0.id == id }
            ?? applications.first { $0.name.compare(wanted, options: [.caseInsensitive]) == .orderedSame }
    }

    // MARK: Reading the desktop's files

    struct Entry {
        var name: String
        var exec: String
        var mimeTypes: Set<String>
        var inTerminal: Bool
        /// Where it was found, for a stable order.
        var order: Int
    }

    /// Every usable desktop entry by id; an id in an earlier folder hides the same id later.
    func desktopEntries() -> [String: Entry] {
        var entries: [String: Entry] = [:]
        var seen = Set<String>()
        var order = 0
        for directory in dataDirectories {
            let folder = directory + "/applications"
            guard let enumerator = FileManager.default.enumerator(atPath: folder) else { continue }
            var files: [String] = []
            while let relative = enumerator.nextObject() as? String {
                if relative.hasSuffix(".desktop") { files.append(relative) }
            }
            for relative in files.sorted() {
                // Entries in subfolders have ids with `-` for `/` (`kde4/okular.desktop` is `kde4-okular.desktop`).
                let id = relative.replacingOccurrences(of: "/", with: "-")
                guard seen.insert(id).inserted else { continue }
                guard let text = try? String(contentsOfFile: folder + "/" + relative, encoding: .utf8),
                      let entry = Self.entry(text, order: order, programExists: programExists) else { continue }
                entries[id] = entry
                order += 1
            }
        }
        return entries
    }

    /// An entry's `[Desktop Entry]` group, when it is an application that can run.
    static func entry(_ text: String, order: Int, programExists: (String) -> Bool) -> Entry? {
        var values: [String: String] = [:]
        var inGroup = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("[") { inGroup = trimmed == "[Desktop Entry]"; continue }
            guard inGroup, !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { continue }
            let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
            if values[key] == nil { values[key] = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces) }
        }
        guard values["Type"] == "Application", values["Hidden"] != "true", let name = values["Name"],
              let exec = values["Exec"], let program = ExecLine.arguments(exec).first, programExists(program)
        else { return nil }
        if let tryExec = values["TryExec"], !programExists(tryExec) { return nil }
        let types = (values["MimeType"] ?? "").split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        return Entry(name: name, exec: exec, mimeTypes: Set(types.filter { !$0.isEmpty }),
                     inTerminal: values["Terminal"] == "true", order: order)
    }

    /// Whether `program` (a path, or a name looked up in `PATH`) can be run.
    public func programExists(_ program: String) -> Bool {
        if program.contains("/") { return access(program, X_OK) == 0 }
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").contains { access("\($0)/\(program)", X_OK) == 0 }
    }

    struct MimeAppsFile {
        var groups: [String: [String: [String]]]

        func values(_ group: String, _ type: String) -> [String] { groups[group]?[type] ?? [] }
    }

    func mimeAppsLists() -> [MimeAppsFile] {
        let paths = configDirectories.map { $0 + "/mimeapps.list" } + dataDirectories.map { $0 + "/applications/mimeapps.list" }
        return paths.compactMap { path in
            // Read as the user's own list is read and written (``MimeAppsList``).
            FileManager.default.fileExists(atPath: path) ? MimeAppsFile(groups: MimeAppsList(path: path).groups) : nil
        }
    }

    /// The types `type` is a kind of, nearest first, from shared-mime-info's `subclasses`.
    func parents(of type: String) -> [String] {
        var direct: [String: [String]] = [:]
        for directory in dataDirectories.reversed() {
            guard let text = try? String(contentsOfFile: directory + "/mime/subclasses", encoding: .utf8) else { continue }
            for line in text.split(separator: "\n") {
                let pair = line.split(separator: " ")
                if pair.count == 2 { direct[String(pair[0]), default: []].append(String(pair[1])) }
            }
        }
        var found: [String] = []
        var queue = direct[type] ?? []
        while !queue.isEmpty {
            let next = queue.removeFirst()
            guard next != type, !found.contains(next) else { continue }
            found.append(next)
            queue += direct[next] ?? []
        }
        // Every text is plain text, and everything is a stream of bytes, as GLib has it.
        if type.hasPrefix("text/") && type != "text/plain" && !found.contains("text/plain") { found.append("text/plain") }
        return found
    }
}

/// A desktop entry's `Exec` line: its arguments (quoting as the Desktop Entry specification
/// has it) and its field codes filled in.
public enum ExecLine {
    /// The words of `exec`, unquoted; field codes are left in.
    public static func arguments(_ exec: String) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quoted = false
        var escaped = false
        for character in exec {
            if escaped { current.append(character); escaped = false; continue }
            if quoted {
                if character == "\\" { escaped = true } else if character == "\"" { quoted = false } else { current.append(character) }
                continue
            }
            switch character {
            case "\"": quoted = true; inWord = true
            case " ", "\t":
                if inWord { words.append(current); current = ""; inWord = false }
            default: current.append(character); inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }

    /// The command to run for `file`: `%f`/`%F` its path, `%u`/`%U` its `file://` URI, `%c` the
    /// name, `%k` the entry's file; others (`%i`, deprecated ones) dropped; `%%` a `%`. An entry
    /// without a file code gets the file at the end, as GLib does.
    public static func command(_ exec: String, file: String, name: String) -> [String] {
        var command: [String] = []
        var placed = false
        for word in arguments(exec) {
            switch word {
            case "%f", "%F": command.append(file); placed = true
            case "%u", "%U": command.append(URL(fileURLWithPath: file).absoluteString); placed = true
            case "%i", "%d", "%D", "%n", "%N", "%v", "%m", "%k": continue
            case "%c": command.append(name)
            default:
                var text = ""
                var percent = false
                for character in word {
                    if percent {
                        if character == "%" { text.append("%") }
                        percent = false
                    } else if character == "%" { percent = true } else { text.append(character) }
                }
                command.append(text)
            }
        }
        if !placed { command.append(file) }
        return command
    }
}
