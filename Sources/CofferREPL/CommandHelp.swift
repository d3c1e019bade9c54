public import CofferCore

/// The usage, summary and examples of one command, in both languages.
public struct CommandHelp: Sendable {
    public var name: String
    public var usage: String
    /// Flags, options and operands, for the parser and for completion.
    public var syntax: CommandSyntax
    public var summary: LocalizedText
    public var details: LocalizedText
    public var examples: [String]

    /// Every command the interpreter knows, in the order `help` lists them.
    public static let all: [CommandHelp] = [
        CommandHelp(
            name: "ls", usage: "ls [-l] [-a] [-t|-S] [-r] [--thumbnails] [path]",
            syntax: CommandSyntax(shortFlags: "laStr1", longFlags: ["thumbnails"], operands: [.sandboxPath]),
            summary: LocalizedText("List a folder: folders first, in natural order.", "列出文件夹内容：文件夹在前，按自然顺序排列。"),
            details: LocalizedText(
                "-l adds size, date and type; -a shows hidden items; -t sorts newest first, -S largest first; -r reverses. --thumbnails makes the thumbnails of its images and PDFs in the background, on every core (a one-off command waits for them).",
                "-l 显示大小、日期和类型；-a 显示隐藏项目；-t 按时间从新到旧，-S 按大小从大到小；-r 反转顺序。--thumbnails 在后台用所有处理器核心为其中的图片和 PDF 生成缩略图（一次性命令会等待其完成）。"),
            examples: ["ls", "ls -l Download", "ls -la 'My Notes'", "ls --thumbnails Photos"]),
        CommandHelp(
            name: "cd", usage: "cd [path]",
            syntax: CommandSyntax(operands: [.sandboxFolder]),
            summary: LocalizedText("Change the current folder (alone: go to files:/).", "切换当前文件夹（不带参数时回到 files:/）。"),
            details: LocalizedText("Paths are relative to the current folder; “..” goes up, “trash:” changes mount.",
                                   "路径相对于当前文件夹；“..”返回上一级，“trash:”切换挂载点。"),
            examples: ["cd Download", "cd ..", "cd /"]),
        CommandHelp(
            name: "pwd", usage: "pwd",
            syntax: CommandSyntax(),
            summary: LocalizedText("Print the current folder.", "显示当前文件夹。"),
            details: LocalizedText("", ""), examples: ["pwd"]),
        CommandHelp(
            name: "tree", usage: "tree [-L depth] [-a] [path]",
            syntax: CommandSyntax(shortFlags: "a", shortOptions: ["L": .text], operands: [.sandboxFolder]),
            summary: LocalizedText("Show a folder and everything below it.", "以树形显示文件夹及其下所有内容。"),
            details: LocalizedText("-L limits the depth; -a includes hidden items. Folders are read one level at a time.",
                                   "-L 限制层数；-a 包含隐藏项目。逐层读取文件夹。"),
            examples: ["tree", "tree -L 2 Download"]),
        CommandHelp(
            name: "mkdir", usage: "mkdir [-p] path…",
            syntax: CommandSyntax(shortFlags: "p", operands: [.sandboxPath]),
            summary: LocalizedText("Create folders.", "新建文件夹。"),
            details: LocalizedText("-p creates missing parents and accepts folders that already exist.",
                                   "-p 会创建缺少的上级文件夹，已存在的文件夹不报错。"),
            examples: ["mkdir Notes", "mkdir -p 'Projects/2026/报告'"]),
        CommandHelp(
            name: "mv", usage: "mv [--keep-both|--replace|--replace-folder] source… destination",
            syntax: CommandSyntax(longFlags: ["keep-both", "replace", "replace-folder"], operands: [.sandboxPath]),
            summary: LocalizedText("Move items; into the destination when it is a folder.", "移动项目；目标是文件夹时移入其中。"),
            details: LocalizedText(
                "If the name is taken the move fails, unless --keep-both picks a name like “a (2).pdf” or --replace puts the item in the old one's place: an old file is kept as a version (versions, restore --version), an old folder goes to the trash (restore brings it back). A folder is replaced only by a folder and a file by a file; --replace-folder allows either. On a terminal, without these, it asks.",
                "目标名称已存在时操作失败；--keep-both 会改用“a (2).pdf”这样的名称，--replace 会用新项目替换旧项目：旧文件保留为历史版本（versions、restore --version），旧文件夹移到废纸篓（可用 restore 放回）。文件夹只会被文件夹替换，文件只会被文件替换；--replace-folder 允许两者互换。在终端中未给出这些选项时会询问。"),
            examples: ["mv report.pdf Download", "mv --keep-both a.txt b.txt Notes"]),
        CommandHelp(
            name: "rename", usage: "rename [--keep-both|--replace|--replace-folder] path new-name",
            syntax: CommandSyntax(longFlags: ["keep-both", "replace", "replace-folder"], operands: [.sandboxPath, .text]),
            summary: LocalizedText("Rename an item in place.", "在原位置重命名项目。"),
            details: LocalizedText("The new name is a name, not a path: it may not contain “/”. Conflicts work as for mv.",
                                   "新名称只能是名称而不是路径，不能包含“/”。名称冲突的处理与 mv 相同。"),
            examples: ["rename draft.txt final.txt", "rename 'old name' '新名称'"]),
        CommandHelp(
            name: "cp", usage: "cp [-r] [--keep-both|--replace|--replace-folder] source… destination",
            syntax: CommandSyntax(shortFlags: "rR", longFlags: ["keep-both", "replace", "replace-folder"], operands: [.sandboxPath]),
            summary: LocalizedText("Copy items; -r for folders.", "复制项目；复制文件夹需要 -r。"),
            details: LocalizedText(
                "Copies are written under a hidden name and appear only when complete. Conflicts work as for mv.",
                "副本先以隐藏名称写入，完成后才出现。名称冲突的处理与 mv 相同。"),
            examples: ["cp report.pdf Download", "cp -r Photos 'Photos backup'"]),
        CommandHelp(
            name: "rm", usage: "rm [-f|--yes] path…",
            syntax: CommandSyntax(shortFlags: "f", longFlags: ["yes"], operands: [.sandboxPath]),
            summary: LocalizedText("Move items to the trash (nothing is deleted).", "将项目移到废纸篓（不会真正删除）。"),
            details: LocalizedText(
                "Folders go whole. “restore” puts items back; only “empty-trash” deletes for good — and “rm trash:/NAME”, which deletes that trashed item for good, asked first on a terminal. Without a terminal to ask (-c, a pipe), deleting for good needs --yes (or -f).",
                "文件夹整体移入。用“restore”放回原处；只有“empty-trash”才会永久删除——以及“rm trash:/名称”，它在终端中询问后永久删除废纸篓中的该项目。没有终端可以询问时（-c、管道），永久删除需要 --yes（或 -f）。"),
            examples: ["rm draft.txt", "rm 'Old Photos' notes.txt", "rm *.log", "rm trash:/draft.txt", "rm --yes trash:/*"]),
        CommandHelp(
            name: "touch", usage: "touch path…",
            syntax: CommandSyntax(operands: [.sandboxPath]),
            summary: LocalizedText("Make an empty file, or set an item's time to now.", "创建空文件，或把项目的时间设为现在。"),
            details: LocalizedText(
                "Nothing is ever overwritten: an existing file keeps its contents. An S3 object's time cannot be set (it is its upload's).",
                "不会覆盖任何内容：已有文件保留其内容。S3 对象的时间无法设置（即其上传时间）。"),
            examples: ["touch notes.txt", "touch Docs/*.md"]),
        CommandHelp(
            name: "trash", usage: "trash",
            syntax: CommandSyntax(),
            summary: LocalizedText("List the trash: name, original place, deletion time, size.",
                                   "列出废纸篓：名称、原位置、删除时间、大小。"),
            details: LocalizedText(
                "The name is what restore takes. The trash can also be browsed read-only: ls trash:, info trash:/NAME.",
                "名称即 restore 所需的参数。也可以只读浏览废纸篓：ls trash:、info trash:/名称。"),
            examples: ["trash", "ls -l trash:"]),
        CommandHelp(
            name: "restore", usage: "restore [--keep-both|--replace|--replace-folder] name… | restore --version ID [--as NAME] path",
            syntax: CommandSyntax(longFlags: ["keep-both", "replace", "replace-folder"], longOptions: ["version": .text, "as": .text],
                                  operands: [.trashItem]),
            summary: LocalizedText("Put trashed items back where they were.", "将废纸篓中的项目放回原处。"),
            details: LocalizedText(
                "A name is the item's name in the trash, or its original name when only one item has it. Missing folders are recreated. If the place is taken it fails, unless --keep-both or --replace (which moves the item in the way to the trash). With --version ID, puts that version of the file back (as “versions” lists it): what the file has now becomes a version in turn; --as NAME puts it beside the file instead.",
                "名称可以是项目在废纸篓中的名称，或在唯一时使用原名称。缺少的上级文件夹会重新创建。原位置被占用时操作失败，除非使用 --keep-both 或 --replace（占位的项目会被移到废纸篓）。使用 --version ID 时恢复文件的该历史版本（见 versions 的列表）：文件现在的内容随之成为一个历史版本；--as 名称 则把它恢复在文件旁边。"),
            examples: ["restore report.pdf", "restore --keep-both 'notes (2).txt'", "restore --version 3 notes.txt"]),
        CommandHelp(
            name: "changes", usage: "changes [--json] [session]",
            syntax: CommandSyntax(longFlags: ["json"], operands: [.text]),
            summary: LocalizedText("List the sessions that changed files, or one session's changes.", "列出更改过文件的会话，或某个会话的更改。"),
            details: LocalizedText(
                "Every session (this REPL, an RPC or MCP client, the web page) journals what it creates, writes, copies, moves, renames, deletes, restores and tags. Without a session: each session's id, front end, start and number of changes, the most recent first. With one: its changes, newest first. “undo ID” reverts them.",
                "每个会话（本 REPL、RPC 或 MCP 客户端、网页）都会记录它创建、写入、复制、移动、重命名、删除、恢复和加标签的操作。不给会话时：列出每个会话的 ID、前端、开始时间和更改数，最近的在前。给出会话时：列出它的更改，最新的在前。“undo ID” 撤销它们。"),
            examples: ["changes", "changes 0c41d2aa"]),
        CommandHelp(
            name: "undo", usage: "undo [--dry-run] [--force] [--json] session",
            syntax: CommandSyntax(longFlags: ["dry-run", "force", "json"], operands: [.text]),
            summary: LocalizedText("Revert what a session changed.", "撤销某个会话所做的更改。"),
            details: LocalizedText(
                "Newest first: moved items go back, deleted ones come back from the trash, created ones go to the trash, overwritten content comes back from its version, tags are set back. An item another session changed since is left alone and listed with why, unless --force (what is there is then kept as a version or in the trash first). --dry-run only lists. The undo is a session of its own: undo it to redo.",
                "从最新的开始：移动的项目移回，删除的从废纸篓恢复，新建的移到废纸篓，被覆盖的内容从历史版本恢复，标签恢复原样。之后被其他会话更改过的项目不会被处理，并列出原因，除非使用 --force（此时现有内容会先保留为历史版本或放入废纸篓）。--dry-run 只列出。撤销本身也是一个会话：撤销它即可重做。"),
            examples: ["undo --dry-run 0c41d2aa", "undo 0c41d2aa"]),
        CommandHelp(
            name: "versions",
            usage: "versions [--json] path | versions --prune [--keep-last N] [--keep-hourly N] [--keep-daily N] [--keep-weekly N] [--keep-monthly N] [--keep-within DURATION] [--max-size SIZE] [--dry-run] [--json] [path]",
            syntax: CommandSyntax(longFlags: ["json", "prune", "dry-run"], longOptions: [
                "keep-last": .text, "keep-hourly": .text, "keep-daily": .text, "keep-weekly": .text, "keep-monthly": .text,
                "keep-within": .text, "max-size": .text,
            ], operands: [.sandboxPath]),
            summary: LocalizedText("List a file's versions, or prune them.", "列出文件的历史版本，或清理它们。"),
            details: LocalizedText(
                "Every save or replace keeps what the file had as a version: number, date, size and who replaced it, newest first. “cat --version ID” shows one, “restore --version ID” puts it back. --prune drops what the rules do not keep, as restic forget does (--keep-within takes 1y2m3d4h); with no rule, the default: every version for a day, one an hour for a week, one a day for a month, one a week before that, within --max-size (a tenth of the disk). --dry-run only says what would go; --json prints each version kept or dropped with the rules that kept it.",
                "每次保存或替换都会把文件原有的内容保留为一个历史版本：编号、日期、大小和替换者，最新的在前。“cat --version ID” 查看某个版本，“restore --version ID” 恢复它。--prune 删除规则不保留的版本，与 restic forget 相同（--keep-within 形如 1y2m3d4h）；不给规则时使用默认规则：一天内全部保留，一周内每小时一个，一个月内每天一个，更早的每周一个，总量不超过 --max-size（磁盘的十分之一）。--dry-run 只说明将删除什么；--json 列出每个版本的去留及保留它的规则。"),
            examples: ["versions notes.txt", "cat --version 3 notes.txt", "versions --prune --keep-daily 7 --dry-run"]),
        CommandHelp(
            name: "empty-trash", usage: "empty-trash [-f|--yes] [--older-than DAYS | name…]",
            syntax: CommandSyntax(shortFlags: "f", longFlags: ["yes"], longOptions: ["older-than": .text], operands: [.trashItem]),
            summary: LocalizedText("Delete what is in the trash, for good.", "永久删除废纸篓中的内容。"),
            details: LocalizedText(
                "The only command that deletes files (with “rm trash:/NAME”). --older-than keeps items trashed within the last DAYS days; names (as “trash” lists them) delete those items alone. On a terminal it asks first, saying how many items and bytes go, and shows its progress; --yes (or -f) deletes without asking, which is needed where no one can be asked (-c, a pipe).",
                "这是唯一会删除文件的命令（另有“rm trash:/名称”）。--older-than 保留最近 DAYS 天内移入的项目；给出名称（如“trash”所列）则只删除这些项目。在终端中会先询问确认，说明将删除多少项目和字节，并显示进度；--yes（或 -f）不询问直接删除，在无法询问时（-c、管道）必须使用。"),
            examples: ["empty-trash", "empty-trash --older-than 30", "empty-trash draft.txt", "empty-trash --yes"]),
        CommandHelp(
            name: "import", usage: "import [--into folder] [--types uti,…] [--keep-both|--replace|--replace-folder] host-path…",
            syntax: CommandSyntax(longFlags: ["keep-both", "replace", "replace-folder"],
                                  longOptions: ["into": .sandboxFolder, "types": .text], operands: [.hostPath]),
            summary: LocalizedText("Copy files and folders in from this computer.", "从本机复制文件和文件夹进来。"),
            details: LocalizedText(
                "Items go to files:/Import unless --into names a folder (a folder arrives whole, under its own name), each under a free name (“photo (2).png”) unless --replace (a replaced file is kept as a version, a folder goes to the trash). --types admits only those types and what conforms to them, judged by content, not only by name. One line per item; the command fails if any item did.",
                "项目默认放入 files:/Import，可用 --into 指定文件夹（文件夹以原名称整体放入）；重名时自动改名（“photo (2).png”），除非使用 --replace（被替换的文件保留为历史版本，文件夹移到废纸篓）。--types 只接受这些类型及其子类型，并按内容而不只是扩展名判断。每个项目输出一行；任一项目失败则命令失败。"),
            examples: ["import ~/Pictures/cat.png", "import ~/Downloads/Album --into Photos --types public.image"]),
        CommandHelp(
            name: "export", usage: "export [--keep-both|--replace|--replace-folder] [--encoding E] path host-folder",
            syntax: CommandSyntax(longFlags: ["keep-both", "replace", "replace-folder"], longOptions: ["encoding": .text],
                                  operands: [.sandboxPath, .hostPath]),
            summary: LocalizedText("Copy an item out to a folder on this computer (never a move).",
                                   "把项目复制到本机的文件夹（绝不是移动）。"),
            details: LocalizedText(
                "The copy goes through a staging area and appears only when complete. A name already in the folder is kept, and the copy is named “report (2).pdf”, unless --replace, which moves the host item to your desktop trash (never deletes it); a folder is replaced by a file, or a file by a folder, only with --replace-folder. --encoding utf-8, utf-8-bom, utf-16 or gb18030 writes a text file in that encoding (text that does not fit is refused).",
                "副本经由暂存区写出，完成后才出现。目标文件夹中的同名项目会保留，副本命名为“report (2).pdf”，除非使用 --replace：它会把本机上的同名项目移到桌面废纸篓（绝不删除）；只有使用 --replace-folder 时才会用文件替换文件夹或用文件夹替换文件。--encoding utf-8、utf-8-bom、utf-16 或 gb18030 以该编码写出文本文件（无法表示的文本会被拒绝）。"),
            examples: ["export report.pdf ~/Desktop", "export --encoding utf-16 notes.txt ~/Desktop"]),
        CommandHelp(
            name: "open", usage: "open host-path…",
            syntax: CommandSyntax(operands: [.hostPath]),
            summary: LocalizedText("Open a file on this computer in place, without copying it, and bookmark it.",
                                   "原位打开本机上的文件（不复制），并为其创建书签。"),
            details: LocalizedText(
                "The bookmark remembers the file itself: it is found again after a rename in its folder, and reported stale once deleted or replaced.",
                "书签记住的是文件本身：文件在原文件夹中改名后仍能找到；被删除或替换后会标记为已失效。"),
            examples: ["open ~/Documents/notes.txt", "cat --bookmark 1"]),
        CommandHelp(
            name: "bookmarks", usage: "bookmarks [--remove ID]",
            syntax: CommandSyntax(longOptions: ["remove": .text]),
            summary: LocalizedText("List the files opened in place and whether each is still there.",
                                   "列出原位打开的文件，以及它们是否仍然可用。"),
            details: LocalizedText("--remove forgets a bookmark; the file itself is not touched.",
                                   "--remove 删除书签，文件本身不受影响。"),
            examples: ["bookmarks", "bookmarks --remove 2"]),
        CommandHelp(
            name: "cat", usage: "cat [--bookmark ID | --version ID] [path…]",
            syntax: CommandSyntax(longOptions: ["bookmark": .text, "version": .text], operands: [.sandboxPath]),
            summary: LocalizedText("Show text files, in UTF-8, UTF-16 or GB 18030.", "显示文本文件（UTF-8、UTF-16 或 GB 18030）。"),
            details: LocalizedText(
                "The encoding is detected; when it is not UTF-8 a note on standard error says which was used. Binary files are refused. --bookmark reads a file opened in place; --version ID a version of the file (see versions).",
                "自动检测编码；不是 UTF-8 时会在标准错误中注明所用编码。二进制文件会被拒绝。--bookmark 读取原位打开的文件；--version ID 读取文件的某个历史版本（见 versions）。"),
            examples: ["cat notes.txt", "cat --bookmark 1"]),
        CommandHelp(
            name: "head", usage: "head [-n N] [--bookmark ID] [path…]",
            syntax: CommandSyntax(shortOptions: ["n": .text], longOptions: ["bookmark": .text], operands: [.sandboxPath]),
            summary: LocalizedText("Show the first lines of text files (10 unless -n).", "显示文本文件的前几行（默认 10 行）。"),
            details: LocalizedText("Encodings as for cat.", "编码处理与 cat 相同。"),
            examples: ["head notes.txt", "head -n 3 报告.txt"]),
        CommandHelp(
            name: "edit", usage: "edit [--bookmark ID] [path|host:path]",
            syntax: CommandSyntax(longOptions: ["bookmark": .text], operands: [.sandboxPath]),
            summary: LocalizedText("Edit a text file in your editor ($VISUAL, $EDITOR or vi).",
                                   "用你的编辑器（$VISUAL、$EDITOR 或 vi）编辑文本文件。"),
            details: LocalizedText(
                "The editor works on a private UTF-8 copy; when it exits, the copy is saved back in the file's own encoding (UTF-16, GB 18030…) and line endings — only if the file did not change meanwhile: otherwise you choose to overwrite it, keep both, keep your copy in files:/Recovered or discard it. An editor that fails or changes nothing saves nothing. A new name makes a new file. host:PATH or --bookmark edits a file on this computer in place.",
                "编辑器处理的是一份私有的 UTF-8 副本；退出后按文件原有的编码（UTF-16、GB 18030 等）和换行符保存回去——前提是文件在此期间没有被修改，否则由你选择覆盖、保留两者、把副本保存到 files:/Recovered 或放弃。编辑器出错或没有改动时不保存任何内容。新名称会创建新文件。host:路径 或 --bookmark 原位编辑本机上的文件。"),
            examples: ["edit notes.txt", "edit host:~/Documents/todo.txt"]),
        CommandHelp(
            name: "write", usage: "write [--append] [--if-version V] [--keep-both|--replace] [--bookmark ID] [path|host:path]",
            syntax: CommandSyntax(longFlags: ["append", "keep-both", "replace"],
                                  longOptions: ["if-version": .text, "bookmark": .text], operands: [.sandboxPath]),
            summary: LocalizedText("Write standard input to a file.", "把标准输入写入文件。"),
            details: LocalizedText(
                "The file appears only when complete. --append adds to its end; --if-version writes only while the file is at that version (info shows it). A name already taken fails unless --replace (the old file is kept as a version: see versions) or --keep-both. Text written to a UTF-16 or GB 18030 file is converted to its encoding.",
                "文件写完后才出现。--append 追加到末尾；--if-version 仅当文件仍是该版本时写入（info 会显示版本）。名称已存在时失败，除非使用 --replace（旧文件保留为历史版本，见 versions）或 --keep-both。写入 UTF-16 或 GB 18030 文件的文本会转换为该文件的编码。"),
            examples: ["echo hi | coffer -c 'write Notes/a.md'", "date | coffer -c 'write --append Notes/a.md'"]),
        CommandHelp(
            name: "info", usage: "info path…",
            syntax: CommandSyntax(operands: [.sandboxPath]),
            summary: LocalizedText("Show an item's kind, type, size, dates and backup flag.", "显示项目的种类、类型、大小、日期和备份标记。"),
            details: LocalizedText(
                "A file's type is shown by its name and by its content (libmagic), with a warning when they disagree; text files show their encoding.",
                "文件类型会分别按名称和按内容（libmagic）显示，两者不一致时给出提示；文本文件还会显示其编码。"),
            examples: ["info report.pdf"]),
        CommandHelp(
            name: "fav", usage: "fav [ls] | fav add [--desktop] path | fav rm path",
            syntax: CommandSyntax(longFlags: ["desktop"], operands: [.text, .sandboxPath]),
            summary: LocalizedText("Favourite places: list, add, remove.", "收藏的位置：列出、添加、删除。"),
            details: LocalizedText(
                "A favourite is a folder or file in Coffer, or a folder of this computer written host:PATH. cd completes favourites first, and mounts lists them; one that was moved or deleted is marked missing, not dropped. --desktop also puts a host folder in the desktop's bookmarks (GTK's, which file managers share).",
                "收藏可以是 Coffer 中的文件夹或文件，也可以是写作 host:路径 的本机文件夹。cd 补全时先给出收藏，mounts 也会列出它们；被移动或删除的收藏会标为已不存在，而不会被删掉。--desktop 还会把本机文件夹加入桌面书签（GTK 的书签，文件管理器共用）。"),
            examples: ["fav add Projects", "fav add --desktop host:~/Documents", "fav", "fav rm Projects"]),
        CommandHelp(
            name: "share", usage: "share path [--expires 1h|7d|DATE] [--password] [--downloads N] [--upload]",
            syntax: CommandSyntax(longFlags: ["password", "upload"], longOptions: ["expires": .text, "downloads": .text],
                                  operands: [.sandboxPath]),
            summary: LocalizedText("Make a link to a file or folder that coffer serve answers.", "为文件或文件夹创建由 coffer serve 提供的链接。"),
            details: LocalizedText(
                "The link (/s/ID, after the address coffer serve prints) needs no access token and reaches exactly what was shared: a file share that file, a folder share that folder's tree. --expires ends it after a time (30m, 12h, 7d, 2w) or at a date; --password asks for a password (from standard input without a terminal); --downloads ends it after that many finished downloads; --upload makes a folder a drop box: visitors may upload into it, never over anything, and see nothing of it. shares lists them, unshare ID ends one at once.",
                "链接（coffer serve 显示的地址后加 /s/ID）无需访问令牌，且只能访问所共享的内容：文件共享只有该文件，文件夹共享只有该文件夹及其内容。--expires 在一段时间后（30m、12h、7d、2w）或某个日期结束共享；--password 询问密码（没有终端时从标准输入读取）；--downloads 在下载完成指定次数后结束；--upload 把文件夹变成投递箱：访问者可以上传文件，但不会覆盖任何内容，也看不到文件夹里的东西。shares 列出所有共享，unshare ID 立即结束一个共享。"),
            examples: ["share Reports/Q3.pdf --expires 7d", "share Photos --downloads 3", "share Inbox --upload --expires 2w"]),
        CommandHelp(
            name: "shares", usage: "shares",
            syntax: CommandSyntax(),
            summary: LocalizedText("List the share links, with what is left of each.", "列出共享链接及其剩余情况。"),
            details: LocalizedText("One line a share: its link, what it shares, when it expires, whether it has a password, downloads so far, and whether it has expired or has no downloads left.",
                                   "每个共享一行：链接、共享的内容、到期时间、是否有密码、已下载次数，以及是否已过期或下载次数已用完。"),
            examples: ["shares"]),
        CommandHelp(
            name: "unshare", usage: "unshare id…",
            syntax: CommandSyntax(operands: [.text]),
            summary: LocalizedText("End share links at once.", "立即结束共享链接。"),
            details: LocalizedText("The link answers 404 from the next request on, also for a download already under way. The item itself is not touched.",
                                   "从下一个请求起，该链接返回 404，正在进行的下载也一样。所共享的项目本身不受影响。"),
            examples: ["unshare 3q2-7wXvRZuU0bq1M_lFzA"]),
        CommandHelp(
            name: "open-with", usage: "open-with path [app] [--in-place] | open-with --bookmark ID [app]",
            syntax: CommandSyntax(longFlags: ["in-place"], longOptions: ["bookmark": .text], operands: [.sandboxPath, .text]),
            summary: LocalizedText("Open a file in another application of the desktop.", "用桌面上的其他应用打开文件。"),
            details: LocalizedText(
                "Without app, lists the applications the desktop associates with the file's type (mimeapps.list and the .desktop entries, default first) and, at a terminal, asks which. app is a desktop entry id, with or without .desktop, or its Name. A file in Coffer is handed over as a read-only copy (in the export staging folder, kept a day) unless --in-place hands over the file itself; a file of this computer (host:PATH, or --bookmark ID for one opened in place before) is opened where it is.",
                "不给出应用时，列出桌面为该文件类型关联的应用（来自 mimeapps.list 和 .desktop 条目，默认应用在前），并在终端上询问用哪个。应用可以是桌面条目 ID（带或不带 .desktop）或其名称。Coffer 中的文件会以只读副本交给应用（位于导出暂存文件夹，保留一天），除非使用 --in-place 交出文件本身；本机文件（host:路径，或用 --bookmark ID 指定之前原位打开过的文件）在原处打开。"),
            examples: ["open-with Notes/todo.txt", "open-with report.pdf org.gnome.Evince", "open-with --in-place draft.md gedit"]),
        CommandHelp(
            name: "recent", usage: "recent",
            syntax: CommandSyntax(),
            summary: LocalizedText("List the files Coffer used lately, newest first.", "列出 Coffer 最近使用的文件，最新的在前。"),
            details: LocalizedText(
                "Files opened in place, edited, imported, exported and downloaded are recorded in the desktop's recent files (recently-used.xbel, which file managers show as Recent), unless Coffer was started with --no-recents.",
                "原位打开、编辑、导入、导出和下载的文件会记入桌面的最近文件（recently-used.xbel，文件管理器显示为“最近”），除非启动 Coffer 时使用了 --no-recents。"),
            examples: ["recent"]),
        CommandHelp(
            name: "tag", usage: "tag path… +tag… -tag…",
            syntax: CommandSyntax(operands: [.sandboxPath]),
            summary: LocalizedText("Add (+) and remove (-) tags of items.", "为项目添加（+）和移除（-）标签。"),
            details: LocalizedText(
                "Tags are the desktop's: the user.xdg.tags attribute, which file managers such as Dolphin show. Each item's tags are printed after; copies, moves, the trash, imports and exports keep them. “--” ends the tags, before a path that starts with + or -.",
                "标签采用桌面的约定：user.xdg.tags 扩展属性，Dolphin 等文件管理器会显示。之后会打印每个项目的标签；复制、移动、废纸篓、导入和导出都会保留标签。“--”结束标签，用于以 + 或 - 开头的路径之前。"),
            examples: ["tag report.pdf +work +urgent", "tag Notes/old.txt -urgent"]),
        CommandHelp(
            name: "tags", usage: "tags [folder]",
            syntax: CommandSyntax(operands: [.sandboxFolder]),
            summary: LocalizedText("List every tag in use, most used first.", "列出所有在用的标签，最常用的在前。"),
            details: LocalizedText("Counts the items carrying each tag below the folder (files:/ by default).",
                                   "统计文件夹（默认 files:/）下带有每个标签的项目数。"),
            examples: ["tags", "tags Projects"]),
        CommandHelp(
            name: "find", usage: "find [pattern [path]] [--type uti,…] [--tag t,…] [--newer T] [--older T] [--larger S] [--smaller S] [--sort name|date|size] [--limit N] [--walk]",
            syntax: CommandSyntax(longFlags: ["walk"], longOptions: ["type": .text, "limit": .text, "tag": .text, "newer": .text,
                                                                     "older": .text, "larger": .text, "smaller": .text, "sort": .text],
                                  operands: [.text, .sandboxFolder]),
            summary: LocalizedText("Find items by name, type, tags, date and size.", "按名称、类型、标签、日期和大小查找项目。"),
            details: LocalizedText(
                "Case, accents and width are ignored; “*” matches every name. --type keeps items conforming to a type (public.image finds PNG and JPEG); --tag items carrying every tag given; --newer and --older items changed since or before a time (30m, 12h, 7d, 2w, 2026-11-01); --larger and --smaller files of at least or under a size (10K, 5M, 1G); --sort orders the matches (date newest first, size largest first) instead of the walk order; --limit stops after N. "
                    + "The search index answers when it is ready, else the folders are walked (--walk forces it). Hidden items and package contents are skipped.",
                "不区分大小写、重音和全半角；“*”匹配所有名称。--type 只保留符合该类型的项目（public.image 可找到 PNG 和 JPEG）；--tag 只保留带有所有给定标签的项目；--newer 和 --older 按修改时间筛选（30m、12h、7d、2w、2026-11-01）；--larger 和 --smaller 按文件大小筛选（10K、5M、1G）；--sort 按指定方式排序（日期从新到旧，大小从大到小），而不是按查找顺序；--limit 最多显示 N 个。"
                    + "索引就绪时由索引回答，否则逐个文件夹查找（--walk 强制如此）。不包括隐藏项目和文件包内部。"),
            examples: ["find report", "find 报告 Download", "find --type public.image photo", "find '*' --newer 7d --larger 1M --sort size",
                       "find --tag work"]),
        CommandHelp(
            name: "reindex", usage: "reindex [--rebuild]",
            syntax: CommandSyntax(longFlags: ["rebuild"]),
            summary: LocalizedText("Bring the search index up to date now.", "立即更新搜索索引。"),
            details: LocalizedText(
                "The index normally keeps itself current; this waits for it. --rebuild throws it away and builds it again.",
                "索引通常会自动保持最新；此命令会等待更新完成。--rebuild 会丢弃索引并重新建立。"),
            examples: ["reindex", "reindex --rebuild"]),
        CommandHelp(
            name: "fetch", usage: "fetch path…",
            syntax: CommandSyntax(operands: [.sandboxPath]),
            summary: LocalizedText("Bring remote files here, so they open without the network.", "把远程文件下载到本地，以后无需网络即可打开。"),
            details: LocalizedText(
                "Files on an S3 mount are read through into the local cache (Library/Caches/Remote), with a progress bar; Ctrl-C stops. Listing never downloads anything. On a local mount this only reads the file.",
                "S3 挂载点上的文件会被完整读取到本地缓存（Library/Caches/Remote），并显示进度条；按 Ctrl-C 停止。列出文件夹从不下载内容。在本地挂载点上只会读取文件。"),
            examples: ["fetch b:/Reports/2026.pdf"]),
        CommandHelp(
            name: "download", usage: "download [--to folder] [--name name] [--max-size bytes] [--ca-file file] URL… | download --resume [id…]",
            syntax: CommandSyntax(longFlags: ["resume"], longOptions: ["to": .sandboxFolder, "name": .text, "max-size": .text,
                                                                       "ca-file": .hostPath], operands: [.text]),
            summary: LocalizedText("Download files from the web into files:/Download.", "从网络下载文件到 files:/Download。"),
            details: LocalizedText(
                "Each file appears only when complete, under the name the server suggests (or the URL's, or --name), a new one when it is taken. Ctrl-C pauses a download; “download --resume” goes on from where it stopped, and “downloads” lists them. Only http and https; certificates are checked (--ca-file adds authorities).",
                "文件下载完成后才会出现，使用服务器建议的名称（或网址中的名称，或 --name），重名时自动改名。按 Ctrl-C 暂停下载；“download --resume”从中断处继续，“downloads”列出所有下载。仅支持 http 和 https，并校验证书（--ca-file 可添加证书颁发机构）。"),
            examples: ["download https://example.com/report.pdf", "download --to Papers --name paper.pdf https://example.com/x?id=3",
                       "download --resume"]),
        CommandHelp(
            name: "upload", usage: "upload [--field name] [--form key=value]… [--ascii-name field] [--put] [--ca-file file] path… URL",
            syntax: CommandSyntax(longFlags: ["put"], longOptions: ["field": .text, "form": .text, "ascii-name": .text,
                                                                    "ca-file": .hostPath], operands: [.sandboxPath]),
            summary: LocalizedText("Send files to a web server.", "把文件发送到网络服务器。"),
            details: LocalizedText(
                "Each file goes as a multipart/form-data POST (in the field “file” unless --field names another, after the --form fields), streamed from disk, its name as browsers send it; --put sends the bytes alone. For servers that garble names that are not ASCII, --ascii-name FIELD sends an ASCII name and the real one in FIELD. One line per file with the server's status; a PUT the server was too busy for is tried again.",
                "每个文件以 multipart/form-data POST 发送（字段为“file”，可用 --field 指定，--form 字段在前），从磁盘流式读取，文件名按浏览器的方式发送；--put 只发送文件内容。对于会弄乱非 ASCII 名称的服务器，--ascii-name 字段 会发送 ASCII 名称，并在该字段中附上原名。每个文件输出一行服务器状态；服务器繁忙时 PUT 会重试。"),
            examples: ["upload report.pdf https://example.com/upload", "upload --form album=2026 --ascii-name name 照片.jpg https://example.com/u",
                       "upload --put backup.tar https://example.com/store/backup.tar"]),
        CommandHelp(
            name: "downloads", usage: "downloads [--clear]",
            syntax: CommandSyntax(longFlags: ["clear"]),
            summary: LocalizedText("List downloads: done, paused, failed.", "列出下载：已完成、已暂停、失败。"),
            details: LocalizedText("One line each, oldest first: its id, its state, how much came, and where it went or why it stopped. --clear forgets the done and failed ones, with any data they kept; unfinished ones untouched for 30 days are forgotten anyway.",
                                   "每个下载一行，最早的在前：编号、状态、已下载的大小，以及保存位置或停止的原因。--clear 清除已完成和失败的下载及其保留的数据；30 天未动的未完成下载也会被清除。"),
            examples: ["downloads", "downloads --clear"]),
        CommandHelp(
            name: "preview", usage: "preview [--size 128|256|512|1024] path…",
            syntax: CommandSyntax(longOptions: ["size": .text], operands: [.sandboxPath]),
            summary: LocalizedText("Show what a file is, before opening it.", "在打开文件之前查看它是什么。"),
            details: LocalizedText(
                "Images: pixels, format, orientation, the date and camera from EXIF. PDFs: pages, page size, title, author. Text: encoding, lines and the first lines. Archives (zip, tar, 7z…): the entry count and the first entries, never extracted. On a terminal that shows images (kitty graphics), also the thumbnail, 256 pixels unless --size says.",
                "图片：像素、格式、方向，以及 EXIF 中的拍摄时间和相机。PDF：页数、页面尺寸、标题、作者。文本：编码、行数和开头几行。压缩包（zip、tar、7z 等）：条目数和前几个条目，绝不解压。在能显示图片的终端（kitty 图形协议）上还会显示缩略图，默认 256 像素，可用 --size 指定。"),
            examples: ["preview photo.jpg", "preview report.pdf notes.txt", "preview --size 512 scan.png"]),
        CommandHelp(
            name: "du", usage: "du [path…]",
            syntax: CommandSyntax(operands: [.sandboxPath]),
            summary: LocalizedText("Add up the size of files below a folder.", "统计文件夹下文件的总大小。"),
            details: LocalizedText("Hidden items count; links are not followed.", "包含隐藏项目；不跟随链接。"),
            examples: ["du", "du Download"]),
        CommandHelp(
            name: "mounts", usage: "mounts",
            syntax: CommandSyntax(),
            summary: LocalizedText("List the mounts and whether they can be changed, then the favourites.",
                                   "列出挂载点及其是否可修改，然后列出收藏。"),
            details: LocalizedText("", ""), examples: ["mounts"]),
        CommandHelp(
            name: "help", usage: "help [command]",
            syntax: CommandSyntax(operands: [.command]),
            summary: LocalizedText("List commands, or explain one.", "列出所有命令，或说明某个命令。"),
            details: LocalizedText("", ""), examples: ["help", "help cp"]),
        CommandHelp(
            name: "quit", usage: "quit | exit",
            syntax: CommandSyntax(),
            summary: LocalizedText("Leave Coffer (Ctrl-D works too).", "退出 Coffer（也可以按 Ctrl-D）。"),
            details: LocalizedText("", ""), examples: ["quit"]),
    ]

    /// Every word that starts a command, aliases included.
    public static var commandNames: [String] { all.map(\.name) + ["exit"] }

    public static func named(_ name: String) -> CommandHelp? {
        all.first { $0.name == name } ?? (name == "exit" ? named("quit") : nil)
    }
}
