// The preview pane: the facts `files/preview` gives, and the file itself as the browser can
// show it — an image, a PDF's first page, a text in its encoding (editable), an archive's entries.
import { bridge } from "./bridge.js";
import { $, contentURL, failed, formatDate, formatSize, kindText, show, thumbnailURL } from "./common.js";
import { answeredKeepEditing } from "./dialogs.js";
import { say } from "./words.js";

/// Shows `node` (a file) in the pane; `saved` runs after an edit is saved.
export async function preview(node, saved) {
  const pane = $("preview"), body = $("preview-body");
  pane.hidden = false;
  pane.dataset.path = node.path;
  $("preview-name").textContent = node.name;
  body.replaceChildren();
  $("preview-facts").textContent = "";
  const download = $("download");
  download.href = contentURL(node.path, true);
  const facts = await bridge.call("files/preview", { path: node.path });
  if (pane.dataset.path !== node.path) return;  // another was chosen meanwhile
  const lines = [formatSize(node.size ?? facts.size), kindText(node)];
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
    // The first page, drawn by the server; the whole document in the browser's own viewer.
    const page = document.createElement("img");
    page.alt = `${node.name}, ${say("pages")} 1`;
    page.className = "first-page";
    page.src = thumbnailURL(node.path, 1024);
    const whole = document.createElement("a");
    whole.href = contentURL(node.path);
    whole.target = "_blank";
    whole.rel = "noopener";
    whole.textContent = say("opening");
    body.append(page, whole);
  } else if (facts.text) {
    const text = await bridge.call("files/read", { path: node.path, encoding: "text", length: 65536 });
    const pre = document.createElement("pre");
    pre.textContent = text.data;
    pre.tabIndex = 0;
    body.append(pre);
    const edit = document.createElement("button");
    edit.id = "edit";
    edit.type = "button";
    edit.textContent = say("edit");
    edit.onclick = () => startEditing(node, saved).catch(failed);
    body.append(edit);
  } else if (facts.archive) {
    const entries = document.createElement("pre");
    entries.className = "entries";
    entries.tabIndex = 0;
    entries.textContent = facts.archive.firstEntries.map((entry) => entry.path).join("\n");
    body.append(entries);
  }
  await showVersions(node, saved);
}

/// The file's versions (what its saves and replaces kept), newest first, each with Restore:
/// the version goes back over the file, whose content becomes a version in turn.
async function showVersions(node, saved) {
  const { versions } = await bridge.call("files/versions", { path: node.path });
  if ($("preview").dataset.path !== node.path || versions.length === 0) return;
  const section = document.createElement("section");
  section.id = "versions";
  const title = document.createElement("h3");
  title.textContent = say("versions");
  const list = document.createElement("ul");
  for (const version of versions) {
    const item = document.createElement("li");
    item.dataset.version = version.id;
    const text = document.createElement("span");
    text.textContent = [formatDate(version.date), formatSize(version.size), version.frontEnd].filter(Boolean).join(" · ");
    const restore = document.createElement("button");
    restore.type = "button";
    restore.className = "restore-version";
    restore.textContent = say("restore");
    restore.onclick = async () => {
      try {
        await bridge.call("files/restoreVersion", { path: node.path, id: version.id });
        show(say("versionRestored", formatDate(version.date)));
        await saved?.();
        await preview(node, saved);
      } catch (error) { failed(error); }
    };
    item.append(text, " ", restore);
    list.append(item);
  }
  section.append(title, list);
  $("preview-body").append(section);
}

export function closePreview() {
  $("preview").hidden = true;
  delete $("preview").dataset.path;
}

// MARK: Editing

/// A text file in a text area, saved over the version that was read: when someone else saved
/// it meanwhile, the session asks (`conflict/ask`) and the person chooses what to do.
async function startEditing(node, saved) {
  const limit = 1 << 20;
  const text = await bridge.call("files/read", { path: node.path, encoding: "text", length: limit });
  const body = $("preview-body");
  body.replaceChildren();
  if (!text.eof) { show(say("tooLong")); return; }
  const area = document.createElement("textarea");
  area.id = "editor";
  area.value = text.data;
  area.spellcheck = false;
  area.setAttribute("aria-label", node.name);
  const save = document.createElement("button");
  save.id = "save";
  save.type = "button";
  save.textContent = say("save");
  const editing = { version: text.version, charset: text.charset === "UTF-8" && text.bom ? "utf-8-bom" : text.charset };
  save.onclick = () => saveEdit(node, area.value, editing, saved).catch(failed);
  body.append(area, save);
  area.focus();
}

async function saveEdit(node, data, editing, saved) {
  answeredKeepEditing();
  try {
    const written = await bridge.call("files/write", { path: node.path, data, charset: editing.charset,
                                                       ifVersion: editing.version, conflict: "ask" });
    if (written.path === node.path) editing.version = written.version;
    show(written.path === node.path ? say("saved") : say("savedAt", written.path));
    await saved?.();
  } catch (error) {
    // Asked and answered "keep editing": nothing was saved, and the text stays here. A
    // refusal nobody was asked about is said, as any failure is.
    if (error?.data?.kind !== "changedSinceRead" || !answeredKeepEditing()) throw error;
  }
}
