import CofferCore
import CofferRuntime
import CofferTransfers
import FileService
import Foundation

extension CommandInterpreter {
    /// `download URL… [--to folder] [--name name] [--max-size bytes] [--ca-file file]`, and
    /// `download --resume [id]`: each into the folder (`files:/Download`), with a progress bar;
    /// Ctrl-C pauses it, to be resumed.
    func download(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "download")
        var engine = DownloadEngine(caFile: arguments.options["ca-file"].map(Self.expandingHome))
        if let limit = arguments.options["max-size"] {
            guard let bytes = Int64(limit), bytes > 0 else {
                throw CofferError(.invalidArgument, detail: LocalizedText("--max-size needs a number of bytes",
                                                                          "--max-size 需要字节数")(language))
            }
            engine.maxSize = bytes
        }
        let label = LocalizedText("Downloading", "正在下载")
        if arguments.flags.contains("resume") {
            let unfinished = try TransferStore(of: service).unfinished()
            // Named, a download is tried again whatever stopped it; unnamed, not one the server
            // refused or whose server's name does not resolve (`downloads` lists those).
            let chosen = arguments.operands.isEmpty ? unfinished.filter(\.isWorthResuming)
                : unfinished.filter { arguments.operands.contains($0.id) }
            guard !chosen.isEmpty else {
                output.line(LocalizedText("Nothing to resume.", "没有可继续的下载。")(language))
                return
            }
            let operations = chosen.map { DownloadFile($0.url, engine: engine, resuming: $0.id) }
            if try await runDownloads(operations, label: label) { throw Reported() }
            return
        }
        guard !arguments.operands.isEmpty else { throw usage("download") }
        let folder = try arguments.options["to"].map { (text) throws(CofferError) in try resolve(text) } ?? DownloadFile.defaultFolder
        let name = arguments.options["name"]
        if name != nil, arguments.operands.count > 1 {
            throw CofferError(.invalidArgument, detail: LocalizedText("--name goes with one URL", "--name 只能用于一个网址")(language))
        }
        let operations = arguments.operands.map { DownloadFile($0, into: folder, as: name, engine: engine) }
        if try await runDownloads(operations, label: label) { throw Reported() }
    }

    /// How many downloads of one command run at once.
    static let downloadsAtOnce = 3

    /// Runs downloads: one with a progress bar, several three at a time (a line each as it
    /// ends). Returns whether any failed; a cancel (Ctrl-C) stops them all, paused.
    private func runDownloads(_ operations: [DownloadFile], label: LocalizedText) async throws(CofferError) -> Bool {
        if operations.count == 1, let operation = operations.first {
            do throws(CofferError) {
                let node = try await perform(operation, progress: label)
                output.line("\(operation.url) → \(node.path)")
                return false
            } catch where error.kind == .cancelled {
                throw pausedDownloads()
            } catch {
                reportDownload(error, of: operation.url)
                return true
            }
        }
        let session = self.session
        var failed = false
        var cancelled = false
        await withTaskGroup(of: (DownloadFile, Result<FileNode, CofferError>).self) { group in
            var next = operations.makeIterator()
            func start() -> Bool {
                guard let operation = next.next() else { return false }
                group.addTask {
                    do throws(CofferError) {
                        return (operation, .success(try await session.perform(operation)))
                    } catch {
                        return (operation, .failure(error))
                    }
                }
                return true
            }
            for _ in 0..<Self.downloadsAtOnce {
                if !start() { break }
            }
            for await (operation, outcome) in group {
                switch outcome {
                case .success(let node): output.line("\(operation.url) → \(node.path)")
                case .failure(let error) where error.kind == .cancelled: cancelled = true
                case .failure(let error):
                    reportDownload(error, of: operation.url)
                    failed = true
                }
                output.flush()
                if !cancelled { _ = start() }
            }
        }
        if cancelled { throw pausedDownloads() }
        return failed
    }

    /// A download's failure, naming its URL, and how to go on where going on can help.
    private func reportDownload(_ error: CofferError, of url: String) {
        report(error, about: url)
        guard !TransferError.isFinal(error) else { return }
        errors.line(LocalizedText("  What came so far is kept: “download --resume” goes on from there (“downloads” lists them).",
                                  "  已下载的部分会保留：“download --resume”可从中断处继续（“downloads”列出全部下载）。")(language))
    }

    /// What a Ctrl-C during downloads says: they are paused, not undone.
    private func pausedDownloads() -> CofferError {
        errors.line(LocalizedText("Paused: “download --resume” goes on from where it stopped.",
                                  "已暂停：“download --resume”可从中断处继续。")(language))
        return CofferError(.cancelled, detail: "download-paused")
    }

    /// `downloads`: every download remembered, oldest first: its id, state, how much came,
    /// and where it went or why it stopped.
    func listDownloads(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "downloads")
        if arguments.flags.contains("clear") {
            let cleared = try await perform(ClearDownloads())
            output.line(LocalizedText("Forgot \(cleared) \(cleared == 1 ? "download" : "downloads").",
                                      "已清除 \(cleared) 个下载记录。")(language))
            return
        }
        let store = try TransferStore(of: service)
        // Unfinished ones left alone for 30 days are let go, with what they kept.
        store.dropStale(cache: service.downloadsCachePath)
        let records = store.all()
        guard !records.isEmpty else {
            output.line(LocalizedText("No downloads.", "没有下载记录。")(language))
            return
        }
        for record in records {
            let state: String = switch record.state {
            case .queued: LocalizedText("queued", "排队中")(language)
            case .running: LocalizedText("interrupted", "已中断")(language)
            case .paused: LocalizedText("paused", "已暂停")(language)
            case .failed: LocalizedText("failed", "失败")(language)
            case .done: LocalizedText("done", "完成")(language)
            }
            let amount = record.total.map { "\(Formatting.size(record.received))/\(Formatting.size($0))" }
                ?? Formatting.size(record.received)
            let outcome = record.result ?? record.failure ?? record.url
            output.line("\(record.id)\t\(state)\t\(amount)\t\(outcome)")
        }
    }
}

extension CommandInterpreter {
    /// `upload item… URL [--field name] [--form key=value]… [--ascii-name field] [--put]
    /// [--ca-file file]`: each file sent, one line per file with the server's status; the
    /// command fails if any did.
    func upload(_ words: ArraySlice<String>) async throws {
        let arguments = try parse(words, as: "upload")
        guard arguments.operands.count >= 2, let url = arguments.operands.last else { throw usage("upload") }
        var form = UploadForm()
        if let field = arguments.options["field"] { form.field = field }
        form.asciiNameField = arguments.options["ascii-name"]
        form.put = arguments.flags.contains("put")
        for pair in arguments.repeated["form"] ?? [] {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw CofferError(.invalidArgument, detail: LocalizedText("--form needs KEY=VALUE", "--form 需要 键=值")(language))
            }
            form.fields.append(UploadForm.Field(String(pair[..<equals]), String(pair[pair.index(after: equals)...])))
        }
        let caFile = arguments.options["ca-file"].map(Self.expandingHome)
        var failed = false
        for text in arguments.operands.dropLast() {
            do throws(CofferError) {
                let path = try resolve(text)
                let result = try await perform(UploadFile(path, to: url, form: form, caFile: caFile),
                                               progress: LocalizedText("Uploading", "正在上传"))
                output.line("\(path) → \(result.status)")
            } catch where error.kind == .cancelled {
                throw error
            } catch {
                // The file is named when it is the file's fault; else the address is.
                report(error, about: error.path == nil ? url : nil)
                failed = true
            }
        }
        if failed { throw Reported() }
    }
}
