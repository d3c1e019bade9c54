// What every part of the page shares: the state of the view, the message line, and how paths,
// sizes, dates and kinds are written.
import { language, say } from "./words.js";

export const $ = (id) => document.getElementById(id);

/// The view: the folder (or the trash, or a search) and its loaded items, the selection (keys
/// of items: a path, or a trash id in the trash), the focused item, and how items are shown.
export const state = {
  folder: "files:/", items: [], total: 0, sort: "name", descending: null, hidden: false,
  view: "files", query: "", filters: {}, selection: new Set(), focus: -1, anchor: -1,
  layout: localStorage.getItem("coffer-layout") === "grid" ? "grid" : "list",
  watchId: null, mounts: [], previewed: null, turn: 0,
};

/// A check that stays true while the page shows what it shows now.
export function currentView() {
  const turn = state.turn;
  return () => turn === state.turn;
}

/// Starts showing something else (a folder, the trash, a search) and returns its check: an
/// answer that comes after a later view's is dropped, so a slow listing never paints over the
/// view the person went to since.
export function navigation() {
  state.turn += 1;
  return currentView();
}

/// An item's key in the selection.
export function keyOf(node) { return node.trashId ?? node.path; }

export function selectedItems() { return state.items.filter((node) => state.selection.has(keyOf(node))); }

/// Says `text` on the message line for eight seconds (an empty text hides it); a failure is
/// marked as one.
export function show(text, { error = false } = {}) {
  const box = $("message");
  box.textContent = text;
  box.hidden = !text;
  box.classList.toggle("error", error);
  clearTimeout(show.timer);
  if (text) show.timer = setTimeout(() => { box.hidden = true; }, 8000);
}

export function failed(error) { show(error?.message || String(error), { error: true }); }

/// A change the person cancelled at a question is no failure to report (JSON-RPC's -32800).
export function failedUnlessCancelled(error) { if (!error || error.code !== -32800) failed(error); }

export function parentOf(path) {
  const [mount, rest] = path.split(/:(.*)/s);
  const parts = rest.split("/").filter(Boolean);
  parts.pop();
  return `${mount}:/${parts.join("/")}`;
}

export function nameOf(path) { return path.split("/").filter(Boolean).pop() || path; }

export function join(folder, name) { return folder.endsWith("/") ? folder + name : `${folder}/${name}`; }

/// Whether `path` is `folder` itself (`files:/Docs` and `files:/Docs/` are one).
export function samePath(path, folder) { return path.replace(/\/$/, "") === folder.replace(/\/$/, ""); }

export function formatSize(bytes) {
  if (bytes === undefined || bytes === null) return "";
  const units = ["B", "kB", "MB", "GB", "TB"];
  let value = bytes, unit = 0;
  while (value >= 1000 && unit < units.length - 1) { value /= 1000; unit++; }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

export function formatDate(iso) {
  return iso ? new Date(iso).toLocaleString(language === "en" ? "en-GB" : "zh-CN", { dateStyle: "medium", timeStyle: "short" }) : "";
}

/// The icon an item gets, from its type.
export function iconKind(node) {
  if (node.kind !== "file") return "folder";
  const type = node.type || "";
  if (/image|jpeg|png|gif|webp|heic|heif|avif|tiff|bmp/.test(type)) return "image";
  if (type === "com.adobe.pdf") return "pdf";
  if (/archive|zip/.test(type)) return "archive";
  if (/text|json|xml|yaml|html|css|source/.test(type)) return "text";
  return "file";
}

/// Whether the server can draw a thumbnail of it: the server says so with the node
/// (`thumbnail`), by the one rule every front end follows.
export function hasThumbnail(node) { return node.thumbnail === true; }

export function contentURL(path, download) {
  return `/content?path=${encodeURIComponent(path)}${download ? "&download=1" : ""}`;
}

export function thumbnailURL(path, size) { return `/thumbnail?path=${encodeURIComponent(path)}&size=${size}`; }

/// Types' names in the page's language, as the server gives them (`types/describe`).
export const typeNames = new Map();

/// What a kind is called: the folder's word, else the type's name (“Gzip archive”), else its identifier.
export function kindText(node) { return node.kind === "folder" ? say("folder") : (typeNames.get(node.type) || node.type || ""); }
