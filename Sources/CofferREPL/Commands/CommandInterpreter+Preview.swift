import CofferCore
import CofferPreview
import CofferRuntime
import FileService
import Foundation

/// How a terminal shows images inline, if it does.
public enum ImageProtocol: String, Sendable {
    /// kitty's graphics protocol (kitty, WezTerm, Ghostty, Konsole): PNG sent as is.
    case kitty

    /// The protocol of the terminal the environment describes, or `nil`. Only ever asked
    /// for a standard output that is a terminal: nothing is sent into a pipe or a file.
    /// `COFFER_IMAGES=kitty` or `none` overrides the guess.
    public static func detect(_ environment: [String: String]) -> ImageProtocol? {
        if let chosen = environment["COFFER_IMAGES"] { return ImageProtocol(rawValue: chosen) }
        if environment["KITTY_WINDOW_ID"] != nil || environment["TERM"] == "xterm-kitty" { return .kitty }
        if ["WezTerm", "ghostty"].contains(environment["TERM_PROGRAM"] ?? "") { return .kitty }
        if environment["KONSOLE_VERSION"] != nil { return .kitty }
        return nil
    }
}

extension CommandInterpreter {
    /// `preview [--size N] path…`: what each file is (its facts by kind) and, on a terminal
    /// that shows images, its thumbnail.
    func preview(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "preview")
        guard !arguments.operands.isEmpty else { throw usage("preview") }
        let size = try arguments.options["size"].map { (text) throws(CofferError) in
            guard let size = ThumbnailSize(name: text) else {
                throw CofferError(.invalidArgument, detail: LocalizedText(
                    "--size is 128, 256, 512 or 1024", "--size 取 128、256、512 或 1024")(language))
            }
            return size
        } ?? .large
        var failed = false
        for (index, text) in arguments.operands.enumerated() {
            if index > 0 { output.line() }
            do throws(CofferError) {
                let preview = try await perform(PreviewItem(try resolve(text)))
                printRows(rows(of: preview))
                if preview.hasThumbnail, let imageProtocol, output.isTerminal {
                    do throws(CofferError) {
                        let thumbnail = try await perform(MakeThumbnail(preview.node.path, pixels: size.pixels))
                        show(thumbnail, with: imageProtocol)
                    } catch where error.kind == .cancelled {
                        throw error
                    } catch {
                        output.flush()
                        report(error)
                    }
                }
            } catch where error.kind == .cancelled {
                throw error
            } catch {
                output.flush()
                report(error)
                failed = true
            }
        }
        if failed { throw Reported() }
    }

    private func rows(of preview: Preview) -> [(LocalizedText, String)] {
        let node = preview.node
        var rows: [(LocalizedText, String)] = [
            (LocalizedText("Name", "名称"), node.name),
            (LocalizedText("Type", "类型"), typeName(node.typeIdentifier)),
            (LocalizedText("Size", "大小"), Formatting.size(node.size)),
        ]
        switch preview.details {
        case .image(let image):
            rows.append((LocalizedText("Pixels", "像素"), "\(image.width) × \(image.height)"))
            rows.append((LocalizedText("Format", "格式"), image.format))
            if image.frames > 1 { rows.append((LocalizedText("Frames", "帧数"), String(image.frames))) }
            if let orientation = image.orientation {
                rows.append((LocalizedText("Orientation", "方向"), Self.orientationName(orientation)(language)))
            }
            if let taken = image.taken { rows.append((LocalizedText("Taken", "拍摄时间"), taken.replacingOccurrences(of: "T", with: " "))) }
            if let camera = image.camera { rows.append((LocalizedText("Camera", "相机"), camera)) }
        case .document(let document):
            rows.append((LocalizedText("Pages", "页数"), String(document.pages)))
            rows.append((LocalizedText("Page size", "页面尺寸"), Self.pageSize(document)))
            if let title = document.title { rows.append((LocalizedText("Title", "标题"), title)) }
            if let author = document.author { rows.append((LocalizedText("Author", "作者"), author)) }
        case .text(let text):
            rows.append((LocalizedText("Encoding", "编码"), text.encoding))
            rows.append((LocalizedText("Lines", "行数"), text.linesComplete
                         ? String(text.lines) : LocalizedText("more than \(text.lines)", "超过 \(text.lines)")(language)))
            for (number, line) in text.firstLines.enumerated() {
                rows.append((number == 0 ? LocalizedText("Begins", "开头") : LocalizedText("", ""), Formatting.visible(line)))
            }
        case .archive(let archive):
            rows.append((LocalizedText("Format", "格式"), archive.compression.map { "\(archive.format), \($0)" } ?? archive.format))
            rows.append((LocalizedText("Entries", "条目"), archive.entriesComplete
                         ? String(archive.entries) : LocalizedText("more than \(archive.entries)", "超过 \(archive.entries)")(language)))
            rows.append((LocalizedText("Unpacked", "解压后"), Formatting.size(archive.declaredBytes)))
            for (number, entry) in archive.firstEntries.enumerated() {
                let size = entry.isFolder ? "/" : entry.size.map { "  " + Formatting.size($0) } ?? ""
                rows.append((number == 0 ? LocalizedText("Contents", "内容") : LocalizedText("", ""),
                             Formatting.visible(entry.path) + (entry.isFolder && !entry.path.hasSuffix("/") ? "/" : size)))
            }
        case .none:
            break
        }
        return rows
    }

    private func printRows(_ rows: [(LocalizedText, String)]) {
        let width = rows.reduce(0) { max($0, Formatting.width($1.0(language))) }
        for (label, value) in rows {
            let title = label(language)
            output.line("\(Formatting.padded(title.isEmpty ? "" : title + ":", to: width + 1))  \(value)")
        }
    }

    private static func orientationName(_ value: Int) -> LocalizedText {
        switch value {
        case 1: LocalizedText("upright", "正常")
        case 3: LocalizedText("upside down (3)", "倒置（3）")
        case 6: LocalizedText("turned right (6)", "向右旋转（6）")
        case 8: LocalizedText("turned left (8)", "向左旋转（8）")
        default: LocalizedText("mirrored (\(value))", "镜像（\(value)）")
        }
    }

    /// `595 × 842 pt (A4)`, naming the common paper sizes.
    private static func pageSize(_ document: DocumentFacts) -> String {
        let sizes = [("A4", 595, 842), ("Letter", 612, 792), ("A3", 842, 1191), ("A5", 420, 595), ("Legal", 612, 1008)]
        let (short, long) = (min(document.pageWidth, document.pageHeight), max(document.pageWidth, document.pageHeight))
        let name = sizes.first { abs($0.1 - short) <= 2 && abs($0.2 - long) <= 2 }.map { " (\($0.0))" } ?? ""
        return "\(document.pageWidth) × \(document.pageHeight) pt\(name)"
    }

    /// Sends the PNG to the terminal inline (kitty graphics: base64 in pieces of 4096).
    private func show(_ thumbnail: Thumbnail, with imageProtocol: ImageProtocol) {
        switch imageProtocol {
        case .kitty:
            let encoded = Array(Data(thumbnail.png).base64EncodedString().utf8)
            var start = 0
            repeat {
                let end = min(start + 4096, encoded.count)
                let more = end < encoded.count ? 1 : 0
                let keys = start == 0 ? "a=T,f=100,m=\(more)" : "m=\(more)"
                output.write("\u{1B}_G\(keys);\(String(decoding: encoded[start..<end], as: UTF8.self))\u{1B}\\")
                start = end
            } while start < encoded.count
            output.line()
        }
    }

    /// Starts making the thumbnails of listed items in the background (`ls --thumbnails`):
    /// the listing is not held up; the next command may run meanwhile.
    func prefetchThumbnails(of nodes: [FileNode]) {
        let session = self.session
        backgroundWorkCount += 1
        let number = backgroundWorkCount
        // A long session lists many folders: a finished prefetch is not kept.
        backgroundWork[number] = Task { @MainActor [weak self] in
            _ = try? await session.perform(PrefetchThumbnails(nodes, size: .normal))
            self?.backgroundWork[number] = nil
        }
    }

    /// Waits for background work (`ls --thumbnails`) to end, or cancels it first: a one-off
    /// command waits, so that what it started is done; an interactive session leaving cancels.
    public func endBackgroundWork(waiting: Bool) async {
        let tasks = backgroundWork.values
        backgroundWork = [:]
        for task in tasks {
            if !waiting { task.cancel() }
            await task.value
        }
    }
}
