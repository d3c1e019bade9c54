"use strict";
// Coffer's page: a file browser over JSON-RPC on a WebSocket (the same methods as `coffer rpc`).
// Every name is set as text, never as markup; files are shown through /content, sandboxed.

const words = {
  en: {
    search: "Search", newFolder: "New folder", rename: "Rename", delete: "Move to Trash", upload: "Upload",
    trash: "Trash", hidden: "Hidden files", name: "Name", modified: "Modified", size: "Size", kind: "Kind",
    more: "Show more", emptyTrash: "Empty Trash", back: "Back to files", close: "Close", download: "Download",
    keepBoth: "Keep both", replace: "Replace", cancel: "Cancel", restore: "Restore", folder: "Folder",
    folderName: "Name of the new folder",
    emptyConfirm: "Delete everything in the Trash for good?", lost: "The connection to Coffer was lost.",
    items: (shown, total) => `${shown} of ${total} items`, nothing: "Nothing here.", pages: "pages",
    lines: "lines", entries: "entries", searching: (query) => `Results for “${query}”`, deleted: "Deleted",
    edit: "Edit", save: "Save", saved: "Saved.", overwrite: "Overwrite", saveCopy: "Save as a copy",
    keepEditing: "Keep editing", tooLong: "Only the first 1 MB of a text can be edited here.",
    favourites: "Favourites", addFavourite: "★ Favourite", missing: "Moved or deleted since it was marked",
    share: "Share", shareTitle: "Share by link", expires: "Expires after", password: "Password (optional)",
    downloads: "Downloads allowed", dropBox: "Others may upload here (a drop box)", makeLink: "Make the link",
    copy: "Copy", copied: "The link is copied.", openWith: "Open with…", openWithTitle: "Open with",
    reconnecting: (seconds) => `The connection to Coffer was lost; trying again in ${seconds} s…`,
    reconnected: "Connected to Coffer again.",
    noApplications: "No application on this computer opens this kind of file.",
    openedIn: (name) => `Opened a read-only copy in ${name}.`,
  },
  "zh-Hans": {
    search: "搜索", newFolder: "新建文件夹", rename: "重命名", delete: "移到废纸篓", upload: "上传",
    trash: "废纸篓", hidden: "隐藏文件", name: "名称", modified: "修改时间", size: "大小", kind: "种类",
    more: "显示更多", emptyTrash: "清空废纸篓", back: "返回文件", close: "关闭", download: "下载",
    keepBoth: "保留两者", replace: "替换", cancel: "取消", restore: "恢复", folder: "文件夹",
    folderName: "新文件夹的名称",
    emptyConfirm: "要永久删除废纸篓中的所有内容吗？", lost: "与 Coffer 的连接已断开。",
    items: (shown, total) => `显示 ${shown} 项，共 ${total} 项`, nothing: "这里什么也没有。", pages: "页",
    lines: "行", entries: "个条目", searching: (query) => `“${query}”的搜索结果`, deleted: "删除时间",
    edit: "编辑", save: "保存", saved: "已保存。", overwrite: "覆盖", saveCopy: "另存为副本",
    keepEditing: "继续编辑", tooLong: "这里只能编辑文本的前 1 MB。",
    favourites: "收藏", addFavourite: "★ 收藏", missing: "收藏后已被移动或删除",
    share: "共享", shareTitle: "通过链接共享", expires: "有效期", password: "密码（可选）",
    downloads: "允许下载次数", dropBox: "允许他人上传到这里（投递箱）", makeLink: "生成链接",
    copy: "复制", copied: "链接已复制。", openWith: "打开方式…", openWithTitle: "打开方式",
    reconnecting: (seconds) => `与 Coffer 的连接已断开；${seconds} 秒后重试…`,
    reconnected: "已重新连接到 Coffer。",
    noApplications: "这台电脑上没有能打开此类文件的应用。",
    openedIn: (name) => `已在 ${name} 中打开只读副本。`,
  },
};

const $ = (id) => document.getElementById(id);
let language = localStorage.getItem("coffer-language") || (navigator.language.toLowerCase().startsWith("zh") ? "zh-Hans" : "en");
const say = (key, ...args) => { const word = words[language][key]; return typeof word === "function" ? word(...args) : word; };

// MARK: JSON-RPC over the WebSocket

/// Calls the server's methods, passes its notifications on, and answers the requests it sends
/// (`conflict/ask`: the session's question when a name is taken) with `onRequest`.
class Bridge {
  constructor(onNotification, onRequest, onReconnect) {
    this.next = 1;
    this.waiting = new Map();
    this.onNotification = onNotification;
    this.onRequest = onRequest;
    this.onReconnect = onReconnect;
    this.retry = null;
  }

  open() {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(`ws://${location.host}/rpc`);
      this.socket = socket;
      socket.onopen = () => { socket.wasOpen = true; resolve(); };
      socket.onerror = reject;
      socket.onclose = () => {
        // A socket that never opened is a failed try, which `reconnect` retries itself.
        if (this.socket !== socket || !socket.wasOpen) return;
        // Requests in flight fail visibly; the page tries again, waiting longer each time.
        for (const { fail } of this.waiting.values()) fail({ message: say("lost") });
        this.waiting.clear();
        if (this.opened) this.reconnect(1);
      };
      this.socket.onmessage = (event) => {
        const message = JSON.parse(event.data);
        if (message.method && message.id !== undefined) {
          this.answer(message);
        } else if (message.id !== undefined && this.waiting.has(message.id)) {
          const { done, fail } = this.waiting.get(message.id);
          this.waiting.delete(message.id);
          if (message.error) return fail(message.error);
          // What an operation could not do without failing (attributes a copy lost) is said, not dropped.
          const warnings = message.result && message.result.warnings;
          if (warnings && warnings.length) show(warnings.map((warning) => warning.message).join("\n"));
          done(message.result);
        } else if (message.method) {
          this.onNotification(message.method, message.params || {});
        }
      };
    });
  }

  /// Opens the socket again after `delay` seconds, doubling up to 15 s while the server is
  /// away (a restart, a laptop that slept), then lets the page catch up without a reload.
  reconnect(delay) {
    if (this.retry) return;
    show(say("reconnecting", delay));
    this.retry = setTimeout(async () => {
      this.retry = null;
      try {
        await this.open();
        await this.onReconnect();
        show(say("reconnected"));
      } catch {
        this.reconnect(Math.min(delay * 2, 15));
      }
    }, delay * 1000);
  }

  call(method, params = {}) {
    const id = this.next++;
    return new Promise((done, fail) => {
      this.waiting.set(id, { done, fail });
      this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  notify(method, params = {}) { this.socket.send(JSON.stringify({ jsonrpc: "2.0", method, params })); }

  async answer({ id, method, params }) {
    let reply;
    try {
      reply = { jsonrpc: "2.0", id, result: await this.onRequest(method, params || {}) };
    } catch (error) {
      reply = { jsonrpc: "2.0", id, error: { code: -32601, message: String(error.message || error) } };
    }
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(reply));
  }
}

// MARK: State

const state = {
  folder: "files:/", items: [], total: 0, sort: "name", descending: null, hidden: false,
  view: "files", selected: -1, watchId: null, query: "",
};
const bridge = new Bridge(notified, asked, greet);

function show(text) {
  const box = $("message");
  box.textContent = text;
  box.hidden = !text;
  clearTimeout(show.timer);
  if (text) show.timer = setTimeout(() => { box.hidden = true; }, 8000);
}

function failed(error) { show(error.message || String(error)); }

function errorKind(error) { return error && error.data && error.data.kind; }

function parentOf(path) {
  const [mount, rest] = path.split(/:(.*)/s);
  const parts = rest.split("/").filter(Boolean);
  parts.pop();
  return `${mount}:/${parts.join("/")}`;
}

function join(folder, name) { return folder.endsWith("/") ? folder + name : `${folder}/${name}`; }

function formatSize(bytes) {
  if (bytes === undefined) return "";
  const units = ["B", "kB", "MB", "GB", "TB"];
  let value = bytes, unit = 0;
  while (value >= 1000 && unit < units.length - 1) { value /= 1000; unit++; }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

function formatDate(iso) {
  return iso ? new Date(iso).toLocaleString(language === "en" ? "en-GB" : "zh-CN", { dateStyle: "medium", timeStyle: "short" }) : "";
}

function iconKind(node) {
  if (node.kind !== "file") return "folder";
  const type = node.type || "";
  if (/image|jpeg|png|gif|webp|heic|heif|avif|tiff|bmp/.test(type)) return "image";
  if (type === "com.adobe.pdf") return "pdf";
  if (/archive|zip/.test(type)) return "archive";
  if (/text|json|xml|yaml|html|css|source/.test(type)) return "text";
  return "file";
}

function contentURL(path, download) {
  return `/content?path=${encodeURIComponent(path)}${download ? "&download=1" : ""}`;
}

// MARK: Listing

async function list(folder, append = false, { remembered = true } = {}) {
  if (!append) { state.folder = folder; state.items = []; state.selected = -1; }
  const page = await bridge.call("files/list", {
    path: state.folder, hidden: state.hidden, sort: state.sort, offset: state.items.length,
    ...(state.descending === null ? {} : { descending: state.descending }),
  });
  state.items = state.items.concat(page.entries);
  state.total = page.total;
  if (!append) await watch(state.folder);
  if (!append && remembered) address();
  render();
}

// MARK: The address

/// The folder shown lives in the address (`/?folder=files:/Docs`): reload, Back and Forward,
/// bookmarks and links come back to it. The token never does: it left the address at the first load.
function address() {
  const params = new URLSearchParams();
  if (state.folder !== "files:/") params.set("folder", state.folder);
  const url = params.toString() ? `/?${params}` : "/";
  if (url === location.pathname + location.search) return;
  history.pushState({ folder: state.folder }, "", url);
}

function addressedFolder() {
  return new URLSearchParams(location.search).get("folder") || "files:/";
}

window.onpopstate = () => {
  state.view = "files";
  list(addressedFolder(), false, { remembered: false }).catch(failed);
};

/// What a new connection says first: at the start, and again after reconnecting, when the
/// page lists its folder again and watches it anew.
async function greet() {
  const server = await bridge.call("initialize", { clientInfo: { name: "coffer-web" }, locale: language, capabilities: { conflictQuestions: true } });
  bridge.notify("initialized");
  $("open-with").hidden = !server.desktop;
  if (state.watchId) state.watchId = null;
  if (bridge.opened) await list(state.folder, false, { remembered: false });
  bridge.opened = true;
}

async function watch(folder) {
  if (state.watchId) { bridge.call("files/unwatch", { watchId: state.watchId }).catch(() => {}); state.watchId = null; }
  if (!folder.startsWith("files:")) return;
  try { state.watchId = (await bridge.call("files/watch", { path: folder })).watchId; } catch (error) { /* not watchable */ }
}

let reloadTimer;
function notified(method, params) {
  if (method !== "files/didChange" || state.view !== "files") return;
  const touched = (params.changes || []).some((change) => parentOf(change.path) === state.folder.replace(/\/$/, "") || parentOf(change.path) === state.folder);
  if (!touched) return;
  clearTimeout(reloadTimer);
  reloadTimer = setTimeout(() => list(state.folder).catch(failed), 150);
}

function render() {
  renderBreadcrumbs();
  const list = $("items");
  list.replaceChildren(...state.items.map(row));
  $("more").hidden = state.view !== "files" || state.items.length >= state.total;
  $("more").textContent = `${say("more")} (${say("items", state.items.length, state.total)})`;
  $("trash-tools").hidden = state.view !== "trash";
  document.querySelectorAll(".columns button").forEach((button) => {
    button.classList.toggle("sorted", button.dataset.sort === state.sort);
    button.classList.toggle("up", state.descending === false);
  });
  if (state.items.length === 0) {
    const empty = document.createElement("li");
    empty.className = "muted";
    empty.textContent = say("nothing");
    list.append(empty);
  }
  select(Math.min(state.selected, state.items.length - 1), false);
}

function row(node, index) {
  const item = document.createElement("li");
  item.setAttribute("role", "option");
  item.dataset.index = index;
  const name = document.createElement("div");
  name.className = "name";
  const icon = document.createElement("span");
  const kind = iconKind(node);
  icon.className = `icon ${kind}`;
  if ((kind === "image" || kind === "pdf") && node.path.startsWith("files:")) {
    const thumbnail = document.createElement("img");
    thumbnail.loading = "lazy";
    thumbnail.alt = "";
    thumbnail.src = `/thumbnail?path=${encodeURIComponent(node.path)}&size=128`;
    thumbnail.onerror = () => { thumbnail.remove(); icon.textContent = kind.slice(0, 3).toUpperCase(); };
    icon.append(thumbnail);
  } else {
    icon.textContent = kind === "folder" ? "" : kind.slice(0, 3).toUpperCase();
  }
  const label = document.createElement("span");
  label.textContent = node.name;
  name.append(icon, label);
  const modified = cell("modified", state.view === "trash" ? formatDate(node.deletedAt) : formatDate(node.modified));
  const size = cell("size", node.kind === "folder" ? "" : formatSize(node.size));
  const type = cell("kind", state.view === "trash" ? node.originalPath : (node.kind === "folder" ? say("folder") : node.type));
  item.append(name, modified, size, type);
  if (state.view === "trash") {
    const restore = document.createElement("button");
    restore.textContent = say("restore");
    restore.onclick = (event) => { event.stopPropagation(); restoreItem(node); };
    type.replaceChildren(document.createTextNode(node.originalPath + " "), restore);
  }
  item.onclick = () => select(index, true);
  item.ondblclick = () => open(node);
  if (state.view === "files") {
    item.draggable = true;
    item.ondragstart = (event) => { event.dataTransfer.setData("application/x-coffer-path", node.path); };
    if (node.kind !== "file") {
      item.ondragover = (event) => { if (event.dataTransfer.types.includes("application/x-coffer-path")) { event.preventDefault(); item.classList.add("drop"); } };
      item.ondragleave = () => item.classList.remove("drop");
      item.ondrop = (event) => {
        item.classList.remove("drop");
        const path = event.dataTransfer.getData("application/x-coffer-path");
        if (path && path !== node.path) { event.preventDefault(); event.stopPropagation(); move(path, node.path); }
      };
    }
  }
  return item;
}

function cell(className, text) {
  const element = document.createElement("span");
  element.className = `${className} muted`;
  element.textContent = text || "";
  return element;
}

function renderBreadcrumbs() {
  const crumbs = $("breadcrumbs");
  crumbs.replaceChildren();
  if (state.view !== "files") {
    const title = document.createElement("span");
    title.textContent = state.view === "trash" ? say("trash") : say("searching", state.query);
    crumbs.append(title);
    return;
  }
  const [mount, rest] = state.folder.split(/:(.*)/s);
  const parts = rest.split("/").filter(Boolean);
  const paths = [`${mount}:/`].concat(parts.map((_, index) => `${mount}:/${parts.slice(0, index + 1).join("/")}`));
  [mount].concat(parts).forEach((part, index) => {
    if (index > 0) { const slash = document.createElement("span"); slash.textContent = "/"; crumbs.append(slash); }
    const button = document.createElement("button");
    button.textContent = part;
    button.onclick = () => list(paths[index]).catch(failed);
    crumbs.append(button);
  });
}

function select(index, showPreview) {
  state.selected = index;
  document.querySelectorAll("#items li").forEach((item) => {
    const chosen = Number(item.dataset.index) === index;
    item.classList.toggle("selected", chosen);
    item.setAttribute("aria-selected", chosen);
    if (chosen) item.scrollIntoView({ block: "nearest" });
  });
  const node = state.items[index];
  $("rename").disabled = $("delete").disabled = $("share").disabled = !node || state.view === "trash";
  $("open-with").disabled = !node || node.kind !== "file" || state.view === "trash";
  if (node && showPreview && node.kind === "file" && state.view !== "trash") preview(node).catch(failed);
}

function open(node) {
  if (state.view === "trash") return;
  if (node.kind !== "file") { state.view = "files"; list(node.path).catch(failed); }
  else preview(node).catch(failed);
}

// MARK: Preview

async function preview(node) {
  const pane = $("preview"), body = $("preview-body");
  pane.hidden = false;
  $("preview-name").textContent = node.name;
  body.replaceChildren();
  const download = $("download");
  download.href = contentURL(node.path, true);
  download.textContent = say("download");
  const facts = await bridge.call("files/preview", { path: node.path });
  const lines = [formatSize(node.size), node.type];
  if (facts.image) lines.push(`${facts.image.width} × ${facts.image.height}`, facts.image.taken || "", facts.image.camera || "");
  if (facts.document) lines.push(`${facts.document.pages} ${say("pages")}`, facts.document.title || "", facts.document.author || "");
  if (facts.text) lines.push(facts.text.encoding, `${facts.text.lines} ${say("lines")}`);
  if (facts.archive) lines.push(facts.archive.format, `${facts.archive.entries} ${say("entries")}`);
  $("preview-facts").textContent = lines.filter(Boolean).join(" · ");
  if (facts.image && !/svg/.test(node.type)) {
    const image = document.createElement("img");
    image.alt = node.name;
    image.src = contentURL(node.path);
    body.append(image);
  } else if (facts.document) {
    const frame = document.createElement("iframe");
    frame.title = node.name;
    frame.src = contentURL(node.path);
    body.append(frame);
  } else if (facts.text) {
    const text = await bridge.call("files/read", { path: node.path, encoding: "text", length: 65536 });
    const pre = document.createElement("pre");
    pre.textContent = text.data;
    body.append(pre);
    const edit = document.createElement("button");
    edit.id = "edit";
    edit.textContent = say("edit");
    edit.onclick = () => startEditing(node).catch(failed);
    body.append(edit);
  } else if (facts.archive) {
    const entries = document.createElement("pre");
    entries.textContent = facts.archive.firstEntries.map((entry) => entry.path).join("\n");
    body.append(entries);
  }
}

// MARK: Favourites

/// The side bar: the favourites of Coffer's mounts (the same as the REPL's `fav`); one that
/// vanished is shown struck through, not dropped.
async function showFavourites() {
  const answer = await bridge.call("favourites/list");
  const shelf = $("favourites-list");
  shelf.replaceChildren();
  for (const item of answer.favourites.filter((favourite) => favourite.path)) {
    const button = document.createElement("button");
    button.textContent = item.path.split("/").filter(Boolean).pop() || item.path;
    button.title = item.missing ? `${item.path} — ${say("missing")}` : item.path;
    if (item.missing) button.classList.add("missing");
    button.onclick = () => {
      if (item.folder === false) {
        const name = item.path.split("/").pop();
        state.view = "files";
        list(parentOf(item.path)).then(() => preview({ path: item.path, name, kind: "file" })).catch(failed);
      } else {
        state.view = "files";
        list(item.path).catch(failed);
      }
    };
    shelf.append(button);
  }
}

// MARK: Sharing

/// The share dialog: a link to the selected item, made by `shares/create` as every front end
/// makes it, shown as plain text with a copy button.
function openShare() {
  const node = state.items[state.selected];
  if (!node) return;
  $("share-name").textContent = node.path;
  $("share-upload-label").hidden = node.kind === "file";
  $("share-upload").checked = false;
  $("share-password").value = $("share-downloads").value = $("share-link").value = "";
  $("share-copy").disabled = true;
  $("share-make").onclick = () => makeShare(node).catch(failed);
  $("share-copy").onclick = async () => {
    $("share-link").select();
    try { await navigator.clipboard.writeText($("share-link").value); } catch { document.execCommand("copy"); }
    show(say("copied"));
  };
  $("share-dialog").showModal();
}

async function makeShare(node) {
  const params = { path: node.path };
  if ($("share-expires").value) params.expires = $("share-expires").value;
  if ($("share-password").value) params.password = $("share-password").value;
  if ($("share-downloads").value) params.downloads = Number($("share-downloads").value);
  if (node.kind !== "file" && $("share-upload").checked) params.upload = true;
  const made = await bridge.call("shares/create", params);
  $("share-link").value = location.origin + made.link;
  $("share-copy").disabled = false;
}

/// Open with: offered only when the server runs in the user's graphical session (`initialize`'s
/// `desktop`), where the application appears on the screen in front of them.
async function openWith() {
  const node = state.items[state.selected];
  if (!node || node.kind !== "file") return;
  const { applications } = await bridge.call("files/applications", { path: node.path });
  const list = $("applications");
  list.replaceChildren();
  if (!applications.length) { show(say("noApplications")); return; }
  for (const application of applications) {
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = application.name;
    button.dataset.id = application.id;
    button.onclick = async () => {
      $("open-with-dialog").close();
      const handed = await bridge.call("files/openWith", { path: node.path, application: application.id }).catch(failed);
      if (handed) show(say("openedIn", handed.application.name));
    };
    item.append(button);
    list.append(item);
  }
  $("open-with-dialog").showModal();
}

async function addFavourite() {
  await bridge.call("favourites/add", { path: state.folder });
  await showFavourites();
}

// MARK: Editing

/// A text file in a text area, saved over the version that was read: when someone else saved
/// it meanwhile, the server refuses (`changedSinceRead`) and the person chooses what to do.
async function startEditing(node) {
  const limit = 1 << 20;
  const text = await bridge.call("files/read", { path: node.path, encoding: "text", length: limit });
  const body = $("preview-body");
  body.replaceChildren();
  if (!text.eof) { show(say("tooLong")); return; }
  const area = document.createElement("textarea");
  area.id = "editor";
  area.value = text.data;
  area.spellcheck = false;
  const save = document.createElement("button");
  save.id = "save";
  save.textContent = say("save");
  const editing = { version: text.version, charset: text.charset === "UTF-8" && text.bom ? "utf-8-bom" : text.charset };
  save.onclick = () => saveEdit(node, area.value, editing).catch(failed);
  body.append(area, save);
  area.focus();
}

async function saveEdit(node, data, editing, how = { ifVersion: editing.version }) {
  try {
    const saved = await bridge.call("files/write", { path: node.path, data, charset: editing.charset, ...how });
    if (saved.path === node.path) editing.version = saved.version;
    show(say("saved"));
    await list(state.folder);
  } catch (error) {
    if (error?.data?.kind !== "changedSinceRead") throw error;
    const choice = await changedQuestion(error.message);
    if (choice === "overwrite") await saveEdit(node, data, editing, { conflict: "replace" });
    else if (choice === "copy") await saveEdit(node, data, editing, { conflict: "keepBoth" });
  }
}

/// What to do with an edit whose file changed since it was read: overwrite (the other version
/// goes to the trash), save as a copy beside it, or go on editing (nothing is lost either way).
function changedQuestion(message) {
  const dialog = $("changed");
  $("changed-text").textContent = message;
  return new Promise((resolve) => {
    const answer = (choice) => () => { dialog.close(); resolve(choice); };
    $("overwrite").onclick = answer("overwrite");
    $("save-copy").onclick = answer("copy");
    $("keep-editing").onclick = answer("edit");
    dialog.oncancel = answer("edit");
    dialog.showModal();
  });
}

// MARK: Changes

/// The server's requests. `conflict/ask`: a name is taken where this page's row of the defaults
/// table says "ask"; the session says what is there (`message`), the person chooses.
async function asked(method, params) {
  if (method !== "conflict/ask") throw new Error(`unknown request ${method}`);
  const dialog = $("conflict");
  $("conflict-text").textContent = params.message;
  return new Promise((resolve) => {
    const answer = (choice) => () => { dialog.close(); resolve({ choice }); };
    $("keep-both").onclick = answer("keepBoth");
    $("replace").onclick = answer("replace");
    $("cancel").onclick = answer("cancel");
    dialog.oncancel = answer("cancel");
    dialog.showModal();
  });
}

/// A change the person cancelled at the conflict question is no failure to report.
/// (JSON-RPC's "request cancelled", -32800, as for a cancelled request).
function failedUnlessCancelled(error) { if (!error || error.code !== -32800) failed(error); }

async function move(path, toDirectory) {
  const name = path.split("/").pop();
  await bridge.call("files/move", { path, toDirectory }).catch(failedUnlessCancelled);
  await list(state.folder);
}

async function newFolder() {
  const name = prompt(say("folderName"));
  if (!name) return;
  await bridge.call("files/createDirectory", { path: join(state.folder, name) }).catch(failed);
  await list(state.folder);
}

function renameSelected() {
  const node = state.items[state.selected];
  const item = document.querySelector(`#items li[data-index="${state.selected}"] .name span:last-child`);
  if (!node || !item) return;
  const input = document.createElement("input");
  input.value = node.name;
  item.replaceWith(input);
  input.focus();
  input.select();
  let finished = false;
  const finish = async (keep) => {
    if (finished) return;
    finished = true;
    const newName = input.value.trim();
    if (keep && newName && newName !== node.name) {
      await bridge.call("files/rename", { path: node.path, newName }).catch(failedUnlessCancelled);
    }
    await list(state.folder);
    $("listing").focus();
  };
  input.onkeydown = (event) => {
    event.stopPropagation();
    if (event.key === "Enter") finish(true);
    if (event.key === "Escape") finish(false);
  };
  input.onblur = () => finish(true);
}

async function trashSelected() {
  const node = state.items[state.selected];
  if (!node) return;
  await bridge.call("files/trash", { path: node.path }).catch(failed);
  $("preview").hidden = true;
  await list(state.folder);
}

async function showTrash() {
  state.view = "trash";
  state.selected = -1;
  const trash = await bridge.call("trash/list");
  state.items = trash.items.slice().reverse();
  state.total = state.items.length;
  render();
}

async function restoreItem(node) {
  await bridge.call("trash/restore", { trashId: node.trashId }).catch(failedUnlessCancelled);
  await showTrash();
}

// MARK: Uploads, in chunks through files/upload/*

async function upload(files) {
  for (const file of files) await uploadOne(file).catch(failedUnlessCancelled);
  await list(state.folder);
}

async function uploadOne(file) {
  const box = document.createElement("div");
  box.className = "upload";
  const label = document.createElement("span");
  label.textContent = file.name;
  const cancel = document.createElement("button");
  cancel.textContent = say("cancel");
  const bar = document.createElement("progress");
  bar.max = Math.max(file.size, 1);
  bar.value = 0;
  box.append(label, cancel, bar);
  $("uploads").append(box);
  let cancelled = false, uploadId = null;
  cancel.onclick = () => { cancelled = true; };
  try {
    const begun = await bridge.call("files/upload/begin", { path: join(state.folder, file.name), size: file.size });
    uploadId = begun.uploadId;
    const chunk = 1 << 20;
    for (let offset = 0; offset < file.size; offset += chunk) {
      if (cancelled) { await bridge.call("files/upload/abort", { uploadId }); return; }
      const bytes = new Uint8Array(await file.slice(offset, offset + chunk).arrayBuffer());
      await bridge.call("files/upload/append", { uploadId, offset, data: base64(bytes) });
      bar.value = offset + bytes.length;
    }
    await bridge.call("files/upload/commit", { uploadId });
    bar.value = bar.max;
  } finally {
    setTimeout(() => box.remove(), 1500);
  }
}

function base64(bytes) {
  let text = "";
  for (let index = 0; index < bytes.length; index += 0x8000) text += String.fromCharCode(...bytes.subarray(index, index + 0x8000));
  return btoa(text);
}

// MARK: Search as you type (the index)

let searchTimer;
function searchChanged() {
  clearTimeout(searchTimer);
  const query = $("search").value.trim();
  searchTimer = setTimeout(async () => {
    if (!query) { state.view = "files"; return list(state.folder).catch(failed); }
    try {
      const found = await bridge.call("files/search", { query, path: "files:/", limit: 200 });
      if ($("search").value.trim() !== query) return;
      state.view = "search";
      state.query = query;
      state.items = found.matches;
      state.total = found.matches.length;
      state.selected = -1;
      render();
    } catch (error) { failed(error); }
  }, 200);
}

// MARK: Keys and wiring

function keys(event) {
  if (event.target.closest("input, select, textarea, dialog")) return;
  const count = state.items.length;
  if (event.key === "ArrowDown") { select(Math.min(count - 1, state.selected + 1), true); event.preventDefault(); }
  else if (event.key === "ArrowUp") { select(Math.max(0, state.selected - 1), true); event.preventDefault(); }
  else if (event.key === "Enter" && state.items[state.selected]) open(state.items[state.selected]);
  else if (event.key === "Backspace" && state.view === "files") { list(parentOf(state.folder)).catch(failed); event.preventDefault(); }
  else if (event.key === "F2") renameSelected();
  else if (event.key === "Delete") trashSelected();
}

function label() {
  document.documentElement.lang = language;
  document.querySelectorAll("[data-label]").forEach((element) => { element.textContent = say(element.dataset.label); });
  $("search").placeholder = say("search");
  $("language").value = language;
  if (state.items) render();
}

async function start() {
  label();
  await bridge.open();
  await greet();
  document.querySelectorAll(".columns button").forEach((button) => {
    button.onclick = () => {
      state.descending = state.sort === button.dataset.sort ? !(state.descending ?? ["modified", "size"].includes(state.sort)) : null;
      state.sort = button.dataset.sort;
      list(state.folder).catch(failed);
    };
  });
  $("hidden").onchange = () => { state.hidden = $("hidden").checked; list(state.folder).catch(failed); };
  $("new-folder").onclick = () => newFolder().catch(failed);
  $("rename").onclick = renameSelected;
  $("delete").onclick = () => trashSelected().catch(failed);
  $("upload").onchange = () => { upload([...$("upload").files]); $("upload").value = ""; };
  $("show-trash").onclick = () => showTrash().catch(failed);
  $("add-favourite").onclick = () => addFavourite().catch(failed);
  $("share").onclick = openShare;
  $("open-with").onclick = () => openWith().catch(failed);
  $("leave-trash").onclick = () => { state.view = "files"; list(state.folder).catch(failed); };
  $("empty-trash").onclick = async () => { if (confirm(say("emptyConfirm"))) { await bridge.call("trash/empty").catch(failed); showTrash(); } };
  $("more").onclick = () => list(state.folder, true).catch(failed);
  $("close-preview").onclick = () => { $("preview").hidden = true; };
  $("search").oninput = searchChanged;
  $("language").onchange = () => { localStorage.setItem("coffer-language", $("language").value); location.reload(); };
  document.addEventListener("keydown", keys);
  const listing = $("listing");
  listing.ondragover = (event) => { if (event.dataTransfer.types.includes("Files")) { event.preventDefault(); document.body.classList.add("dragging"); } };
  listing.ondragleave = () => document.body.classList.remove("dragging");
  listing.ondrop = (event) => {
    document.body.classList.remove("dragging");
    if (event.dataTransfer.files.length) { event.preventDefault(); upload([...event.dataTransfer.files]); }
  };
  await showFavourites();
  // The folder the address names (a reload, a bookmark), else the root.
  await list(addressedFolder(), false, { remembered: false }).catch(async (error) => {
    failed(error);
    await list("files:/", false, { remembered: false });
  });
  history.replaceState({ folder: state.folder }, "", location.pathname + location.search);
  listing.focus();
}

start().catch(failed);
