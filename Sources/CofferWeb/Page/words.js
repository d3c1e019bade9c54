// The page's words, in English and Simplified Chinese. The language is the one the person
// chose here, else the one the server read from the browser's Accept-Language (`<html lang>`).

const words = {
  en: {
    search: "Search", newFolder: "New folder", rename: "Rename", delete: "Move to Trash", upload: "Upload files",
    uploadFolder: "Upload a folder", trash: "Trash", hidden: "Hidden files", name: "Name", modified: "Modified",
    size: "Size", kind: "Kind", more: "Show more", emptyTrash: "Empty Trash", back: "Back to files", close: "Close",
    download: "Download", keepBoth: "Keep both", replace: "Replace", cancel: "Cancel", restore: "Restore",
    folder: "Folder", folderName: "Name of the new folder", ok: "OK",
    emptyConfirm: (count, size) => `Delete the ${count} item${count === 1 ? "" : "s"} in the Trash (${size}) for good? This cannot be undone.`,
    deleteForever: "Delete Permanently",
    deleteConfirm: (what, count, size) => `Delete ${count === 1 ? what : `these ${what} items`} (${size}) for good? This cannot be undone.`,
    lost: "The connection to Coffer was lost.",
    items: (shown, total) => `${shown} of ${total} items`, nothing: "Nothing here.", pages: "pages",
    lines: "lines", entries: "entries", searching: (query) => `Results for “${query}”`, deleted: "Deleted", wasAt: "Where it was",
    edit: "Edit", save: "Save", saved: "Saved.", overwrite: "Overwrite", saveCopy: "Save as a copy",
    keepEditing: "Keep editing", keepInRecovered: "Keep in Recovered", savedAt: (path) => `Saved as ${path}.`, tooLong: "Only the first 1 MB of a text can be edited here.",
    places: "Places", favourites: "Favourites", addFavourite: "★ Favourite", missing: "Moved or deleted since it was marked",
    share: "Share", shareTitle: "Share by link", expires: "Expires after", password: "Password (optional)",
    downloads: "Downloads allowed", dropBox: "Others may upload here (a drop box)", makeLink: "Make the link",
    copy: "Copy", copied: "The link is copied.", openWith: "Open with…", openWithTitle: "Open with",
    reconnecting: (seconds) => `The connection to Coffer was lost; trying again in ${seconds} s…`,
    reconnected: "Connected to Coffer again.",
    noApplications: "No application on this computer opens this kind of file.",
    openedIn: (name) => `Opened a read-only copy in ${name}.`,
    grid: "Grid", list: "List", layout: "Layout", filters: "Filters", anyKind: "Any kind", anyTime: "Any time",
    anySize: "Any size", tag: "Tag", images: "Images", pdfs: "PDF documents", texts: "Texts", archives: "Archives",
    media: "Audio and video", folders: "Folders", lastDay: "Last 24 hours", lastWeek: "Last 7 days",
    lastMonth: "Last 30 days", lastYear: "Last year", over1M: "Over 1 MB", over100M: "Over 100 MB",
    under100k: "Under 100 kB", selected: (count) => `${count} selected`, files: "Files",
    uploads: (done, count, sent, total) => `Uploads: ${done} of ${count} files, ${sent} of ${total}`,
    waiting: "Waiting for the connection…", resumed: (at) => `Resumed at ${at}`, queued: "Queued",
    failed: "Failed", done: "Done", cancelAll: "Cancel all", operations: "In progress",
    moving: "Moving", copying: "Copying", downloading: "Downloading", downloadLink: "Download a link…",
    linkAddress: "The address (http or https) to download into this folder", pasteHere: "Paste", opening: "Open the whole document",
    restoreSelected: "Restore", trashEmpty: "The Trash is empty.", lostUpload: "The server no longer has this upload; it starts again.",
    versions: "Versions", versionRestored: (date) => `Restored the version of ${date}; what the file had is kept as a version.`,
    changes: "Changes", changesTitle: "What each session changed", undo: "Undo", thisSession: "this session",
    changeCount: (count, undone) => `${count} change${count === 1 ? "" : "s"}${undone ? `, ${undone} undone` : ""}`,
    undoes: (id) => `undoes ${id}`, noChanges: "No session has changed anything yet.",
    undone: (reverted, skipped) => `Undid ${reverted} change${reverted === 1 ? "" : "s"}${skipped ? `; left ${skipped} alone, changed since` : ""}.`,
    itemsInFolder: "items", shortcuts: "Shortcuts: ↑↓←→ move, Shift/Ctrl select, Enter opens (restores in the Trash), Backspace goes up, Delete moves to the Trash (in the Trash, deletes for good, asked first), F2 renames, Ctrl-A selects all, Ctrl-C/Ctrl-X then Ctrl-V copy or move",
  },
  "zh-Hans": {
    search: "搜索", newFolder: "新建文件夹", rename: "重命名", delete: "移到废纸篓", upload: "上传文件",
    uploadFolder: "上传文件夹", trash: "废纸篓", hidden: "隐藏文件", name: "名称", modified: "修改时间",
    size: "大小", kind: "种类", more: "显示更多", emptyTrash: "清空废纸篓", back: "返回文件", close: "关闭",
    download: "下载", keepBoth: "保留两者", replace: "替换", cancel: "取消", restore: "恢复",
    folder: "文件夹", folderName: "新文件夹的名称", ok: "确定",
    emptyConfirm: (count, size) => `要永久删除废纸篓中的 ${count} 个项目（${size}）吗？此操作无法撤销。`,
    deleteForever: "永久删除",
    deleteConfirm: (what, count, size) => `要永久删除${count === 1 ? what : `这 ${what} 个项目`}（${size}）吗？此操作无法撤销。`,
    lost: "与 Coffer 的连接已断开。",
    items: (shown, total) => `显示 ${shown} 项，共 ${total} 项`, nothing: "这里什么也没有。", pages: "页",
    lines: "行", entries: "个条目", searching: (query) => `“${query}”的搜索结果`, deleted: "删除时间", wasAt: "原位置",
    edit: "编辑", save: "保存", saved: "已保存。", overwrite: "覆盖", saveCopy: "另存为副本",
    keepEditing: "继续编辑", keepInRecovered: "保存到 Recovered", savedAt: (path) => `已保存为 ${path}。`, tooLong: "这里只能编辑文本的前 1 MB。",
    places: "位置", favourites: "收藏", addFavourite: "★ 收藏", missing: "收藏后已被移动或删除",
    share: "共享", shareTitle: "通过链接共享", expires: "有效期", password: "密码（可选）",
    downloads: "允许下载次数", dropBox: "允许他人上传到这里（投递箱）", makeLink: "生成链接",
    copy: "复制", copied: "链接已复制。", openWith: "打开方式…", openWithTitle: "打开方式",
    reconnecting: (seconds) => `与 Coffer 的连接已断开；${seconds} 秒后重试…`,
    reconnected: "已重新连接到 Coffer。",
    noApplications: "这台电脑上没有能打开此类文件的应用。",
    openedIn: (name) => `已在 ${name} 中打开只读副本。`,
    grid: "网格", list: "列表", layout: "布局", filters: "筛选", anyKind: "任意种类", anyTime: "任意时间",
    anySize: "任意大小", tag: "标签", images: "图片", pdfs: "PDF 文稿", texts: "文本", archives: "归档",
    media: "音频和视频", folders: "文件夹", lastDay: "最近 24 小时", lastWeek: "最近 7 天",
    lastMonth: "最近 30 天", lastYear: "最近一年", over1M: "大于 1 MB", over100M: "大于 100 MB",
    under100k: "小于 100 kB", selected: (count) => `已选择 ${count} 项`, files: "文件",
    uploads: (done, count, sent, total) => `上传：${done}/${count} 个文件，${sent}/${total}`,
    waiting: "正在等待连接…", resumed: (at) => `从 ${at} 处继续`, queued: "排队中",
    failed: "失败", done: "完成", cancelAll: "全部取消", operations: "进行中",
    moving: "正在移动", copying: "正在拷贝", downloading: "正在下载", downloadLink: "下载链接…",
    linkAddress: "要下载到此文件夹的地址（http 或 https）", pasteHere: "粘贴", opening: "打开整个文稿",
    restoreSelected: "恢复", trashEmpty: "废纸篓是空的。", lostUpload: "服务器已没有这次上传的记录，将从头开始。",
    versions: "历史版本", versionRestored: (date) => `已恢复 ${date} 的版本；文件原有的内容已保留为历史版本。`,
    changes: "更改记录", changesTitle: "每个会话所做的更改", undo: "撤销", thisSession: "本会话",
    changeCount: (count, undone) => `${count} 个更改${undone ? `，已撤销 ${undone} 个` : ""}`,
    undoes: (id) => `撤销了 ${id}`, noChanges: "还没有会话做过更改。",
    undone: (reverted, skipped) => `已撤销 ${reverted} 个更改${skipped ? `；${skipped} 个之后被更改过，未处理` : ""}。`,
    itemsInFolder: "个项目", shortcuts: "快捷键：↑↓←→ 移动，Shift/Ctrl 选择，Enter 打开（在废纸篓中为恢复），Backspace 上一级，Delete 移到废纸篓（在废纸篓中为永久删除，会先询问），F2 重命名，Ctrl-A 全选，Ctrl-C/Ctrl-X 后 Ctrl-V 拷贝或移动",
  },
};

const chosen = localStorage.getItem("coffer-language");
export const language = words[chosen] ? chosen : (words[document.documentElement.lang] ? document.documentElement.lang : "en");

/// The word for `key` in the page's language; a function's words are given `args`.
export function say(key, ...args) {
  const word = words[language][key] ?? words.en[key];
  return typeof word === "function" ? word(...args) : word;
}

/// Writes every `data-label`, `data-title` and `data-placeholder` of the page in its language.
export function label(root = document) {
  document.documentElement.lang = language;
  root.querySelectorAll("[data-label]").forEach((element) => { element.textContent = say(element.dataset.label); });
  root.querySelectorAll("[data-title]").forEach((element) => { element.title = say(element.dataset.title); element.setAttribute("aria-label", element.title); });
  root.querySelectorAll("[data-placeholder]").forEach((element) => { element.placeholder = say(element.dataset.placeholder); });
}

export function chooseLanguage(choice) {
  localStorage.setItem("coffer-language", choice);
  location.reload();
}
