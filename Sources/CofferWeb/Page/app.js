"use strict";
// Coffer's page: a file browser over JSON-RPC on a WebSocket (the same methods as `coffer rpc`).
// Every name is set as text, never as markup; files are shown through /content, sandboxed.
import { bridge } from "./bridge.js";
import {
  $, currentView, failed, failedUnlessCancelled, formatDate, formatSize, hasThumbnail, iconKind, join, keyOf, kindText,
  nameOf, navigation, parentOf, samePath, selectedItems, show, state, thumbnailURL, typeNames,
} from "./common.js";
import { confirmed, conflictAsked, openShare, openWith } from "./dialogs.js";
import { openChanges } from "./changes.js";
import { closePreview, preview } from "./preview.js";
import { droppedEntries, pickedEntries, uploads } from "./uploads.js";
import { chooseLanguage, label, language, say } from "./words.js";

// MARK: Listing

/// Shows `folder`: its first page of items (or the next page, with `append`), watched for
/// changes. `remember` puts it in the history; `focus` names the item to focus.
async function list(folder, { append = false, remember = true, focus = null } = {}) {
  const changed = !append && !samePath(folder, state.folder);
  // A further page belongs to the view that asked for it; anything else is a new view.
  const current = append ? currentView() : navigation();
  if (!append) {
    if (changed || state.view !== "files") { state.selection.clear(); state.focus = -1; }
    state.view = "files";
    state.folder = folder;
  }
  const page = await bridge.call("files/list", {
    path: folder, hidden: state.hidden, sort: state.sort, offset: append ? state.items.length : 0,
    ...(state.descending === null ? {} : { descending: state.descending }),
  });
  if (!current()) return;
  const kept = append ? state.items : [];
  const focusedKey = state.items[state.focus] ? keyOf(state.items[state.focus]) : null;
  state.items = kept.concat(page.entries);
  state.total = page.total;
  // The selection keeps what is still there; the focus stays on its item.
  const present = new Set(state.items.map(keyOf));
  for (const key of [...state.selection]) if (!present.has(key)) state.selection.delete(key);
  const wanted = focus ?? focusedKey;
  state.focus = wanted ? state.items.findIndex((node) => node.name === wanted || keyOf(node) === wanted) : -1;
  if (focus && state.focus >= 0) { state.selection = new Set([keyOf(state.items[state.focus])]); state.anchor = state.focus; }
  if (!append && changed) closePreview();
  if (!append) await watch(folder);
  render();
  if (remember && !append) address(changed ? "push" : "replace");
}

/// Lists the view again as it is (after a change, a reconnection, a new sort).
function refresh() {
  if (state.view === "trash") return showTrash({ remember: false });
  if (state.view === "search") return runSearch({ remember: false });
  return list(state.folder, { remember: false });
}

// MARK: The address

/// What is shown lives in the address: the folder (`/?folder=files:/Docs`), a search (`q`
/// and its filters), the trash (`view=trash`), the preview (`preview`) and the focused item
/// (`focus`). Reload, Back and Forward, bookmarks and links come back to it. The token never
/// does: it left the address at the first load.
function address(how = "push") {
  const params = new URLSearchParams();
  if (state.view === "trash") params.set("view", "trash");
  else if (state.folder !== "files:/") params.set("folder", state.folder);
  if (state.view === "search") {
    params.set("q", state.query);
    for (const [name, value] of Object.entries(state.filters)) if (value) params.set(name, value);
  }
  const focused = state.items[state.focus];
  if (focused && state.view !== "trash") params.set("focus", focused.name);
  if (!$("preview").hidden && $("preview").dataset.path) params.set("preview", $("preview").dataset.path);
  const url = params.toString() ? `/?${params}` : "/";
  if (url === location.pathname + location.search) return;
  if (how === "push") history.pushState(null, "", url); else history.replaceState(null, "", url);
}

/// Shows what the address names (at the start, and on Back and Forward).
async function follow() {
  const params = new URLSearchParams(location.search);
  const focus = params.get("focus");
  state.filters = Object.fromEntries(filterNames.map((name) => [name, params.get(name) || ""]));
  writeFilters();
  if (params.get("view") === "trash") {
    await showTrash({ remember: false });
  } else if (params.has("q")) {
    state.folder = params.get("folder") || "files:/";
    $("search").value = state.query = params.get("q");
    await runSearch({ remember: false, focus });
  } else {
    $("search").value = "";
    await list(params.get("folder") || "files:/", { remember: false, focus });
  }
  const shown = params.get("preview");
  if (shown) {
    const node = state.items.find((item) => item.path === shown) ?? { path: shown, name: nameOf(shown), kind: "file" };
    await preview(node, refresh).catch(failed);
  } else {
    closePreview();
  }
}

window.onpopstate = () => follow().catch(failed);

// MARK: The connection

/// What a new connection says first: at the start, and again after reconnecting, when the
/// page lists its view again and watches it anew.
async function greet() {
  const server = await bridge.call("initialize", { clientInfo: { name: "coffer-web" }, locale: language, capabilities: { conflictQuestions: true } });
  bridge.notify("initialized");
  $("open-with").hidden = !server.desktop;
  state.mounts = (server.mounts || []).filter((mount) => mount.name !== "trash");
  state.watchId = null;
  renderPlaces();
  if (bridge.opened) { await refresh(); await showFavourites(); }
  bridge.opened = true;
}

async function watch(folder) {
  if (state.watchId) { bridge.call("files/unwatch", { watchId: state.watchId }).catch(() => {}); state.watchId = null; }
  try { state.watchId = (await bridge.call("files/watch", { path: folder })).watchId; } catch { /* not watchable */ }
}

let reloadTimer;
function notified(method, params) {
  if (method === "$/progress") return progressed(params);
  if (method !== "files/didChange" || state.view !== "files") return;
  const touched = (params.changes || []).some((change) => samePath(parentOf(change.path), state.folder) || samePath(change.path, state.folder));
  if (!touched) return;
  clearTimeout(reloadTimer);
  reloadTimer = setTimeout(() => list(state.folder, { remember: false }).catch(failed), 150);
}

async function asked(method, params) {
  if (method !== "conflict/ask") throw new Error(`unknown request ${method}`);
  return conflictAsked(params);
}

// MARK: Drawing

/// Asks the server for the names of the types shown that have none yet, then writes them in.
async function nameTypes() {
  const missing = [...new Set(state.items.map((node) => node.type).filter((type) => type && !typeNames.has(type)))];
  if (!missing.length) return;
  for (const type of missing) typeNames.set(type, type);  // asked once
  await Promise.all(missing.map(async (type) => {
    const described = await bridge.call("types/describe", { identifier: type }).catch(() => null);
    if (described?.description) typeNames.set(type, described.description);
  }));
  if (state.view !== "trash") {
    $("items").querySelectorAll("li[data-index]").forEach((item) => {
      const node = state.items[Number(item.dataset.index)];
      const cell = item.querySelector(".kind");
      if (node && cell) cell.textContent = kindText(node);
    });
  }
}

function render() {
  renderBreadcrumbs();
  nameTypes().catch(() => {});
  const items = $("items");
  items.classList.toggle("grid", state.layout === "grid");
  items.setAttribute("aria-label", state.view === "trash" ? say("trash") : state.view === "search" ? say("searching", state.query) : state.folder);
  items.replaceChildren(...state.items.map(row));
  if (state.items.length === 0) {
    const empty = document.createElement("li");
    empty.className = "muted empty";
    empty.setAttribute("role", "presentation");
    empty.textContent = state.view === "trash" ? say("trashEmpty") : say("nothing");
    items.append(empty);
  }
  $("more").hidden = state.view !== "files" || state.items.length >= state.total;
  $("more").textContent = `${say("more")} (${say("items", state.items.length, state.total)})`;
  $("trash-tools").hidden = state.view !== "trash";
  $("columns").hidden = state.layout === "grid";
  // In the trash the columns say when each item was deleted and where it was.
  document.querySelector('.columns [data-sort="modified"]').textContent = say(state.view === "trash" ? "deleted" : "modified");
  document.querySelector('.columns [data-sort="kind"]').textContent = say(state.view === "trash" ? "wasAt" : "kind");
  document.querySelectorAll(".columns button").forEach((button) => {
    const sorted = button.dataset.sort === state.sort;
    button.classList.toggle("sorted", sorted);
    button.classList.toggle("up", state.descending === false);
    button.setAttribute("aria-sort", !sorted ? "none" : (state.descending === false || (state.descending === null && !["modified", "size"].includes(state.sort)) ? "ascending" : "descending"));
  });
  $("layout").textContent = state.layout === "grid" ? say("list") : say("grid");
  $("layout").setAttribute("aria-pressed", state.layout === "grid");
  document.querySelectorAll("#places button").forEach((button) => {
    const current = button.dataset.view === "trash" ? state.view === "trash" : state.view !== "trash" && samePath(state.folder, button.dataset.path || "") ;
    if (current) button.setAttribute("aria-current", "page"); else button.removeAttribute("aria-current");
  });
  paintSelection();
}

function row(node, index) {
  const item = document.createElement("li");
  item.setAttribute("role", "option");
  item.id = `item-${index}`;
  item.dataset.index = index;
  const name = document.createElement("div");
  name.className = "name";
  const icon = document.createElement("span");
  const kind = iconKind(node);
  icon.className = `icon ${kind}`;
  icon.setAttribute("aria-hidden", "true");
  if (hasThumbnail(node) && state.view !== "trash") {
    const thumbnail = document.createElement("img");
    thumbnail.loading = "lazy";
    thumbnail.alt = "";
    thumbnail.src = thumbnailURL(node.path, state.layout === "grid" ? 256 : 128);
    thumbnail.onerror = () => { thumbnail.remove(); icon.textContent = kind.slice(0, 3).toUpperCase(); };
    // A file without a thumbnail answers 204: the icon stays.
    thumbnail.onload = () => { if (!thumbnail.naturalWidth) thumbnail.remove(); };
    icon.append(thumbnail);
  } else {
    icon.textContent = kind === "folder" ? "" : kind.slice(0, 3).toUpperCase();
  }
  const label = document.createElement("span");
  label.className = "label";
  label.textContent = node.name;
  name.append(icon, label);
  const modified = cell("modified", state.view === "trash" ? formatDate(node.deletedAt) : formatDate(node.modified));
  const size = cell("size", node.kind === "folder" ? "" : formatSize(node.size));
  const type = cell("kind", state.view === "trash" ? node.originalPath : kindText(node));
  item.append(name, modified, size, type);
  if (state.view === "trash") {
    const restore = document.createElement("button");
    restore.type = "button";
    restore.className = "restore";
    restore.textContent = say("restore");
    restore.setAttribute("aria-label", `${say("restore")} ${node.name}`);
    restore.tabIndex = -1;
    restore.onclick = (event) => { event.stopPropagation(); restoreItems([node]).catch(failed); };
    type.replaceChildren(document.createTextNode(node.originalPath + " "), restore);
  }
  item.onclick = (event) => { pick(index, { extend: event.shiftKey, toggle: event.ctrlKey || event.metaKey }); $("items").focus({ preventScroll: true }); };
  item.ondblclick = () => open(node);
  if (state.view !== "trash") {
    item.draggable = true;
    item.ondragstart = (event) => {
      if (!state.selection.has(keyOf(node))) pick(index, {});
      const paths = selectedItems().map((selected) => selected.path);
      event.dataTransfer.setData("application/x-coffer-paths", JSON.stringify(paths));
      event.dataTransfer.effectAllowed = "copyMove";
    };
    if (node.kind !== "file") dropTarget(item, () => node.path);
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
    title.className = "title";
    title.textContent = state.view === "trash" ? say("trash") : say("searching", state.query);
    crumbs.append(title);
    return;
  }
  const [mount, rest] = state.folder.split(/:(.*)/s);
  const parts = rest.split("/").filter(Boolean);
  const paths = [`${mount}:/`].concat(parts.map((_, index) => `${mount}:/${parts.slice(0, index + 1).join("/")}`));
  [mount].concat(parts).forEach((part, index) => {
    if (index > 0) { const slash = document.createElement("span"); slash.textContent = "/"; slash.setAttribute("aria-hidden", "true"); crumbs.append(slash); }
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = part;
    if (index === parts.length) button.setAttribute("aria-current", "location");
    button.onclick = () => list(paths[index]).catch(failed);
    dropTarget(button, () => paths[index]);
    crumbs.append(button);
  });
}

// MARK: Selection

/// Chooses the item at `index`: alone, or added to the selection (`toggle`, Ctrl), or with
/// every item from the anchor (`extend`, Shift). A single file is previewed.
function pick(index, { extend = false, toggle = false, previewing = true, hurried = false } = {}) {
  const node = state.items[index];
  if (!node) return;
  if (extend && state.anchor >= 0) {
    const [from, to] = [Math.min(state.anchor, index), Math.max(state.anchor, index)];
    state.selection = new Set(state.items.slice(from, to + 1).map(keyOf));
  } else if (toggle) {
    const key = keyOf(node);
    if (state.selection.has(key)) state.selection.delete(key); else state.selection.add(key);
    state.anchor = index;
  } else {
    state.selection = new Set([keyOf(node)]);
    state.anchor = index;
  }
  state.focus = index;
  paintSelection();
  const single = state.selection.size === 1 && !extend && !toggle;
  clearTimeout(pick.timer);
  if (previewing && single && node.kind === "file" && state.view !== "trash") {
    // Keys held down move through many items: only the one they stop on is previewed.
    const show = () => preview(node, refresh).then(() => address("replace")).catch(failed);
    if (hurried) pick.timer = setTimeout(show, 150); else show();
  }
  address("replace");
}

function paintSelection() {
  const rows = $("items").querySelectorAll("li[data-index]");
  rows.forEach((item) => {
    const index = Number(item.dataset.index);
    const chosen = state.selection.has(keyOf(state.items[index]));
    item.classList.toggle("selected", chosen);
    item.classList.toggle("focused", index === state.focus);
    item.setAttribute("aria-selected", chosen);
    if (index === state.focus) item.scrollIntoView({ block: "nearest" });
  });
  const focused = state.items[state.focus];
  if (focused) $("items").setAttribute("aria-activedescendant", `item-${state.focus}`); else $("items").removeAttribute("aria-activedescendant");
  const chosen = selectedItems();
  const one = chosen.length === 1 ? chosen[0] : null;
  const inFiles = state.view !== "trash";
  $("rename").disabled = !one || !inFiles;
  $("delete").disabled = !chosen.length || !inFiles;
  $("share").disabled = !one || !inFiles;
  $("open-with").disabled = !one || one.kind !== "file" || !inFiles;
  $("restore-selected").disabled = !chosen.length;
  $("delete-forever").disabled = !chosen.length || inFiles;
  $("status").textContent = chosen.length > 1 ? say("selected", chosen.length) : "";
}

/// How many items a row of the grid holds (1 in the list).
function columns() {
  if (state.layout !== "grid") return 1;
  const rows = $("items").querySelectorAll("li[data-index]");
  if (rows.length < 2) return 1;
  const top = rows[0].offsetTop;
  let count = 0;
  for (const item of rows) { if (item.offsetTop !== top) break; count++; }
  return Math.max(count, 1);
}

function open(node) {
  if (state.view === "trash") return restoreItems([node]).catch(failed);
  if (node.kind !== "file") return list(node.path).catch(failed);
  state.selection = new Set([keyOf(node)]);
  return preview(node, refresh).then(() => address("replace")).catch(failed);
}

// MARK: Places and favourites

/// The side bar: each mount (S3 ones too) and the trash, then the favourites.
function renderPlaces() {
  const places = $("places");
  places.replaceChildren();
  for (const mount of state.mounts) {
    const button = placeButton(mount.name === "files" ? say("files") : mount.name, `${mount.name}:/`);
    button.title = mount.description || `${mount.name}:/`;
    if (mount.writable !== false) dropTarget(button, () => `${mount.name}:/`);
    places.append(button);
  }
  const trash = placeButton(say("trash"), null);
  trash.dataset.view = "trash";
  trash.id = "show-trash";
  trash.onclick = () => showTrash().catch(failed);
  places.append(trash);
}

function placeButton(text, path) {
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = text;
  if (path) { button.dataset.path = path; button.onclick = () => list(path).catch(failed); }
  return button;
}

/// The favourites of Coffer's mounts (the same as the REPL's `fav`); one that vanished is shown
/// struck through, not dropped. A folder among them takes items dropped on it.
async function showFavourites() {
  const answer = await bridge.call("favourites/list");
  const shelf = $("favourites-list");
  shelf.replaceChildren();
  for (const item of answer.favourites.filter((favourite) => favourite.path)) {
    const button = placeButton(nameOf(item.path), null);
    button.title = item.missing ? `${item.path} — ${say("missing")}` : item.path;
    if (item.missing) button.classList.add("missing");
    if (item.folder === false) {
      button.onclick = () => list(parentOf(item.path), { focus: nameOf(item.path) })
        .then(() => preview({ path: item.path, name: nameOf(item.path), kind: "file" }, refresh)).then(() => address("replace")).catch(failed);
    } else {
      button.dataset.path = item.path;
      button.onclick = () => list(item.path).catch(failed);
      if (!item.missing) dropTarget(button, () => item.path);
    }
    shelf.append(button);
  }
}

async function addFavourite() {
  await bridge.call("favourites/add", { path: state.folder });
  await showFavourites();
}

// MARK: Changes

/// Makes `element` take items dragged from the list (moved; copied with Ctrl) into the folder
/// `target()` names, and files dragged from the desktop (uploaded there).
function dropTarget(element, target) {
  element.addEventListener("dragover", (event) => {
    const types = event.dataTransfer.types;
    if (!types.includes("application/x-coffer-paths") && !types.includes("Files")) return;
    event.preventDefault();
    event.stopPropagation();
    event.dataTransfer.dropEffect = event.ctrlKey ? "copy" : "move";
    element.classList.add("drop");
  });
  element.addEventListener("dragleave", () => element.classList.remove("drop"));
  element.addEventListener("drop", async (event) => {
    element.classList.remove("drop");
    const folder = target();
    const text = event.dataTransfer.getData("application/x-coffer-paths");
    if (text) {
      event.preventDefault();
      event.stopPropagation();
      const paths = JSON.parse(text).filter((path) => path !== folder && !samePath(parentOf(path), folder));
      if (paths.length) await transfer(event.ctrlKey ? "files/copy" : "files/move", paths, folder);
    } else if (event.dataTransfer.types.includes("Files")) {
      event.preventDefault();
      event.stopPropagation();
      await uploads.add(folder, await droppedEntries(event.dataTransfer)).catch(failed);
    }
  });
}

/// Moves or copies `paths` into `folder`, one request each, with their progress shown and a
/// cancel button (`$/cancelRequest`).
async function transfer(method, paths, folder) {
  for (const path of paths) {
    await withProgress(method, { path, toDirectory: folder }, `${method === "files/copy" ? say("copying") : say("moving")} ${nameOf(path)}`);
  }
  await refresh();
}

/// Runs `method` with a progress token, shown in the panel of work in progress with a cancel
/// button (`$/cancelRequest`) until it is answered.
async function withProgress(method, params, title) {
  const token = `page-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const { id, result } = bridge.start(method, { ...params, workDoneToken: token });
  const activity = startActivity(token, title, () => bridge.cancel(id));
  try { return await result; } catch (error) { failedUnlessCancelled(error); } finally { activity.end(); }
}

/// Downloads an address from the web into the folder shown (`transfers/download`), with its
/// progress; a cancelled download is paused, as in every front end.
async function downloadLink() {
  const url = prompt(say("linkAddress"));
  if (!url) return;
  const placed = await withProgress("transfers/download", { url: url.trim(), toDirectory: state.folder }, `${say("downloading")} ${url.trim()}`);
  if (placed && state.view === "files") await list(state.folder, { remember: false, focus: placed.name });
}

const activities = new Map();

/// A line in the panel of work in progress: its title, a bar, and cancel.
function startActivity(token, title, cancel) {
  const item = document.createElement("li");
  item.className = "activity";
  const text = document.createElement("span");
  text.textContent = title;
  const bar = document.createElement("progress");
  bar.max = 100;
  bar.setAttribute("aria-label", title);
  const stop = document.createElement("button");
  stop.type = "button";
  stop.textContent = say("cancel");
  stop.onclick = cancel;
  const note = document.createElement("span");
  note.className = "muted";
  item.append(text, stop, bar, note);
  $("activity-list").append(item);
  $("activity").hidden = false;
  const activity = {
    report(value) {
      if (value.percentage !== undefined) bar.value = value.percentage;
      if (value.message) note.textContent = value.message;
    },
    end() {
      activities.delete(token);
      bar.value = 100;
      setTimeout(() => { item.remove(); $("activity").hidden = !$("activity-list").children.length; }, 800);
    },
  };
  activities.set(token, activity);
  return activity;
}

function progressed({ token, value }) { activities.get(token)?.report(value || {}); }

async function newFolder() {
  const name = prompt(say("folderName"));
  if (!name) return;
  await bridge.call("files/createDirectory", { path: join(state.folder, name) }).catch(failed);
  await list(state.folder, { remember: false, focus: name });
}

/// Renames the focused item in place: its name becomes a field; Enter keeps, Escape drops.
function renameSelected() {
  const [node] = selectedItems();
  const label = $("items").querySelector(`li.selected .label`);
  if (!node || !label || state.view === "trash") return;
  const input = document.createElement("input");
  input.value = node.name;
  input.setAttribute("aria-label", say("rename"));
  label.replaceWith(input);
  input.focus();
  const dot = node.kind === "file" ? node.name.lastIndexOf(".") : -1;
  input.setSelectionRange(0, dot > 0 ? dot : node.name.length);
  let finished = false;
  const finish = async (keep) => {
    if (finished) return;
    finished = true;
    const newName = input.value.trim();
    let focus = node.name;
    if (keep && newName && newName !== node.name) {
      const renamed = await bridge.call("files/rename", { path: node.path, newName }).catch(failedUnlessCancelled);
      if (renamed) focus = renamed.name;
    }
    await list(state.folder, { remember: false, focus });
    $("items").focus();
  };
  input.onkeydown = (event) => {
    event.stopPropagation();
    if (event.key === "Enter") finish(true);
    if (event.key === "Escape") finish(false);
  };
  input.onblur = () => finish(true);
}

async function trashSelected() {
  const chosen = selectedItems();
  if (!chosen.length || state.view === "trash") return;
  const next = state.items[Math.min(state.focus + 1, state.items.length - 1)];
  for (const node of chosen) {
    await bridge.call("files/trash", { path: node.path }).catch(failed);
    if ($("preview").dataset.path === node.path) closePreview();
  }
  state.selection.clear();
  if (state.view === "search") return runSearch({ remember: false });
  await list(state.folder, { remember: false, focus: next && !chosen.includes(next) ? next.name : null });
}

// MARK: The trash

async function showTrash({ remember = true } = {}) {
  const current = navigation();
  if (state.view !== "trash") { state.selection.clear(); state.focus = -1; }
  state.view = "trash";
  const trash = await bridge.call("trash/list");
  if (!current()) return;
  state.items = trash.items.slice().reverse();
  state.total = state.items.length;
  const present = new Set(state.items.map(keyOf));
  for (const key of [...state.selection]) if (!present.has(key)) state.selection.delete(key);
  if (state.focus >= state.items.length) state.focus = state.items.length - 1;
  closePreview();
  render();
  if (remember) address("push");
}

async function restoreItems(nodes) {
  for (const node of nodes) await bridge.call("trash/restore", { trashId: node.trashId }).catch(failedUnlessCancelled);
  await showTrash({ remember: false });
}

/// Deletes the chosen items of the trash for good when the person says so, told what goes.
async function deleteForever(nodes) {
  if (!nodes.length) return;
  const bytes = nodes.reduce((sum, item) => sum + (item.size || 0), 0);
  const what = nodes.length === 1 ? `“${nodes[0].name}”` : String(nodes.length);
  if (!(await confirmed(say("deleteConfirm", what, nodes.length, formatSize(bytes)), say("deleteForever")))) return;
  await bridge.call("trash/empty", { trashIds: nodes.map((node) => node.trashId) }).catch(failed);
  await showTrash({ remember: false });
}

/// Empties the trash when the person says so, told how much it holds.
async function emptyTrash() {
  const trash = await bridge.call("trash/list");
  const bytes = trash.items.reduce((sum, item) => sum + (item.size || 0), 0);
  if (!trash.items.length) return show(say("trashEmpty"));
  if (!(await confirmed(say("emptyConfirm", trash.items.length, formatSize(bytes)), say("emptyTrash")))) return;
  await bridge.call("trash/empty").catch(failed);
  await showTrash({ remember: false });
}

// MARK: Search (the index), with filters

const filterNames = ["types", "newer", "larger", "smaller", "tag"];

function readFilters() {
  state.filters = Object.fromEntries(filterNames.map((name) => [name, $(`filter-${name}`).value.trim()]));
}

function writeFilters() {
  for (const name of filterNames) $(`filter-${name}`).value = state.filters[name] || "";
  $("filters").open ||= filterNames.some((name) => state.filters[name]);
}

let searchTimer;
function searchChanged() {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    readFilters();
    const query = $("search").value.trim();
    const filtered = filterNames.some((name) => state.filters[name]);
    if (!query && !filtered) {
      if (state.view === "search") list(state.folder, { remember: false }).then(() => address("push")).catch(failed);
      return;
    }
    const first = state.view !== "search";
    state.query = query;
    runSearch({ remember: true, push: first }).catch(failed);
  }, 200);
}

/// Searches from the folder shown (all of `files:` from the root) by name and the filters.
async function runSearch({ remember = true, push = false, focus = null } = {}) {
  const query = state.query || "*";
  const params = { query, path: state.folder, limit: 200 };
  const { types, newer, larger, smaller, tag } = state.filters;
  if (types) params.types = types.split(",");
  if (newer) params.newer = newer;
  if (larger) params.larger = larger;
  if (smaller) params.smaller = smaller;
  if (tag) params.tags = [tag];
  const current = navigation();
  const found = await bridge.call("files/search", params);
  if (!current()) return;
  if (state.view !== "search") { state.selection.clear(); state.focus = -1; }
  state.view = "search";
  state.items = found.matches;
  state.total = found.matches.length;
  state.focus = focus ? state.items.findIndex((node) => node.name === focus) : Math.min(state.focus, state.items.length - 1);
  render();
  if (remember) address(push ? "push" : "replace");
}

// MARK: Copy, cut and paste

let clipboard = null;

function copySelection(cut) {
  const chosen = selectedItems();
  if (chosen.length && state.view !== "trash") clipboard = { cut, paths: chosen.map((node) => node.path) };
}

async function paste() {
  if (!clipboard || state.view !== "files") return;
  const { cut, paths } = clipboard;
  if (cut) clipboard = null;
  await transfer(cut ? "files/move" : "files/copy", paths, state.folder);
}

// MARK: Keys

function keys(event) {
  if (event.target.closest("input, select, textarea, dialog, summary")) return;
  const count = state.items.length;
  const step = columns();
  const control = event.ctrlKey || event.metaKey;
  const moveTo = (index) => {
    if (!count) return;
    pick(Math.max(0, Math.min(count - 1, index)), { extend: event.shiftKey, hurried: true });
    event.preventDefault();
  };
  const from = state.focus < 0 ? -1 : state.focus;
  switch (event.key) {
    case "ArrowDown": return moveTo(from < 0 ? 0 : from + step);
    case "ArrowUp": return moveTo(from < 0 ? 0 : from - step);
    case "ArrowRight": if (state.layout === "grid") moveTo(from + 1); return;
    case "ArrowLeft": if (state.layout === "grid") moveTo(from - 1); return;
    case "Home": return moveTo(0);
    case "End": return moveTo(count - 1);
    case "Enter":
      if (state.view === "trash" && state.selection.size) { event.preventDefault(); restoreItems(selectedItems()).catch(failed); }
      else if (state.items[state.focus]) { event.preventDefault(); open(state.items[state.focus]); }
      return;
    case "Backspace":
      if (state.view === "files") { event.preventDefault(); list(parentOf(state.folder)).catch(failed); }
      else { event.preventDefault(); list(state.folder).catch(failed); }
      return;
    case "F2": event.preventDefault(); return renameSelected();
    case "Delete":
      event.preventDefault();
      return (state.view === "trash" ? deleteForever(selectedItems()) : trashSelected()).catch(failed);
    case "Escape":
      if (!$("preview").hidden) { closePreview(); address("replace"); } else { state.selection.clear(); paintSelection(); }
      return;
  }
  if (!control) return;
  const letter = event.key.toLowerCase();
  if (letter === "a") { event.preventDefault(); state.selection = new Set(state.items.map(keyOf)); paintSelection(); }
  else if (letter === "c") copySelection(false);
  else if (letter === "x") copySelection(true);
  else if (letter === "v") { event.preventDefault(); paste().catch(failed); }
}

// MARK: Start

function wire() {
  document.querySelectorAll(".columns button").forEach((button) => {
    button.onclick = () => {
      state.descending = state.sort === button.dataset.sort ? !(state.descending ?? ["modified", "size"].includes(state.sort)) : null;
      state.sort = button.dataset.sort;
      refresh().catch(failed);
    };
  });
  $("hidden").onchange = () => { state.hidden = $("hidden").checked; refresh().catch(failed); };
  $("new-folder").onclick = () => newFolder().catch(failed);
  $("rename").onclick = renameSelected;
  $("delete").onclick = () => trashSelected().catch(failed);
  $("upload").onchange = () => { uploads.add(state.folder, pickedEntries($("upload"))).catch(failed); $("upload").value = ""; };
  $("upload-folder").onchange = () => { uploads.add(state.folder, pickedEntries($("upload-folder"))).catch(failed); $("upload-folder").value = ""; };
  $("uploads-cancel").onclick = () => uploads.cancelAll();
  // The pickers' labels act as buttons from the keyboard too.
  for (const id of ["upload-label", "upload-folder-label"]) {
    $(id).onkeydown = (event) => { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); $(id).querySelector("input").click(); } };
  }
  uploads.onFinished = () => { if (state.view === "files") list(state.folder, { remember: false }).catch(failed); };
  $("add-favourite").onclick = () => addFavourite().catch(failed);
  $("download-link").onclick = () => downloadLink().catch(failed);
  $("changes").onclick = () => openChanges(refresh).catch(failed);
  $("share").onclick = () => { const [node] = selectedItems(); if (node) openShare(node); };
  $("open-with").onclick = () => { const [node] = selectedItems(); if (node?.kind === "file") openWith(node).catch(failed); };
  $("leave-trash").onclick = () => list(state.folder).catch(failed);
  $("restore-selected").onclick = () => restoreItems(selectedItems()).catch(failed);
  $("empty-trash").onclick = () => emptyTrash().catch(failed);
  $("delete-forever").onclick = () => deleteForever(selectedItems()).catch(failed);
  $("more").onclick = () => list(state.folder, { append: true }).catch(failed);
  $("close-preview").onclick = () => { closePreview(); address("replace"); };
  $("search").oninput = searchChanged;
  for (const name of filterNames) $(`filter-${name}`).onchange = searchChanged;
  $("filter-tag").oninput = searchChanged;
  $("layout").onclick = () => {
    state.layout = state.layout === "grid" ? "list" : "grid";
    localStorage.setItem("coffer-layout", state.layout);
    render();
  };
  $("language").value = language;
  $("language").onchange = () => chooseLanguage($("language").value);
  document.addEventListener("keydown", keys);
  // Files dropped from the desktop anywhere on the list land in the folder shown.
  const listing = $("listing");
  listing.addEventListener("dragover", (event) => {
    if (state.view === "files" && event.dataTransfer.types.includes("Files")) { event.preventDefault(); document.body.classList.add("dragging"); }
  });
  listing.addEventListener("dragleave", () => document.body.classList.remove("dragging"));
  listing.addEventListener("drop", async (event) => {
    document.body.classList.remove("dragging");
    if (state.view !== "files" || !event.dataTransfer.types.includes("Files")) return;
    event.preventDefault();
    await uploads.add(state.folder, await droppedEntries(event.dataTransfer)).catch(failed);
  });
}

async function start() {
  label();
  wire();
  bridge.onNotification = notified;
  bridge.onRequest = asked;
  bridge.onReconnect = greet;
  bridge.onStateChange = (connected) => document.body.classList.toggle("offline", !connected);
  await bridge.open();
  await greet();
  await showFavourites();
  // What the address names (a reload, a bookmark, a link), else the root.
  await follow().catch(async (error) => {
    failed(error);
    await list("files:/", { remember: false });
  });
  $("items").focus();
}

start().catch(failed);
