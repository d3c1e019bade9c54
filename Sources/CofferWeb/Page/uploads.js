// Uploads: files (and folders with their trees) sent with the tus 1.0 protocol to /tus/.
//
// Each upload is begun on the page's socket (`files/upload/begin` with `resumable`), so a
// name already taken is asked about by the session like every other change; its bytes then go
// by PATCH to /tus/ID, in pieces, with the page's cookie. A dropped connection is waited out
// (1, 2, 4… up to 15 s) and the upload goes on from the offset the server gives (HEAD). A page
// reloaded mid-way finds its upload again when the same file is picked: it is remembered by
// destination, name, size and modification time. Nothing appears in the folder until the last
// byte has arrived.
import { bridge } from "./bridge.js";
import { $, failedUnlessCancelled, formatSize, join, show } from "./common.js";
import { say } from "./words.js";

const piece = 8 << 20;
const parallel = 2;
const tusHeaders = { "Tus-Resumable": "1.0.0" };

/// Files waiting, being sent, or done, with the total shown above them.
class UploadQueue {
  constructor() {
    this.items = [];
    this.running = 0;
    this.onFinished = () => {};
  }

  /// Adds files for `folder`; each `{file, relative}` lands at `folder/relative` (a folder
  /// dropped with its tree gives its files' paths inside it), and a `{relative}` without a
  /// file is a folder of the tree, made even when it holds nothing.
  async add(folder, entries) {
    this.items = this.items.filter((item) => item.status !== "failed");
    const folders = new Set();
    for (const { file, relative } of entries) {
      const parts = relative.split("/").slice(0, file ? -1 : undefined);
      for (let depth = 1; depth <= parts.length; depth++) folders.add(parts.slice(0, depth).join("/"));
    }
    for (const path of [...folders].sort()) {
      await bridge.call("files/createDirectory", { path: join(folder, path), intermediate: true });
    }
    for (const { file, relative } of entries) if (file) this.items.push(new Upload(this, file, join(folder, relative)));
    if (!this.items.length) return this.onFinished();
    this.render();
    this.pump();
  }

  pump() {
    while (this.running < parallel) {
      const next = this.items.find((item) => item.status === "queued");
      if (!next) break;
      this.running++;
      next.run().finally(() => {
        this.running--;
        this.render();
        this.pump();
        if (this.running === 0 && !this.items.some((item) => item.status === "queued")) this.finished();
      });
    }
  }

  /// Everything is sent: the folder is listed again, and what arrived leaves the panel (what
  /// failed stays, with its reason, until the next upload).
  finished() {
    this.onFinished();
    this.items = this.items.filter((item) => !["done", "cancelled"].includes(item.status));
    this.render();
  }

  cancelAll() { for (const item of this.items) item.cancel(); }

  /// The total line: files done of all, bytes sent of all.
  render() {
    const panel = $("uploads");
    panel.hidden = this.items.length === 0;
    const count = this.items.length;
    const done = this.items.filter((item) => item.status === "done").length;
    const total = this.items.reduce((sum, item) => sum + item.file.size, 0);
    const sent = this.items.reduce((sum, item) => sum + item.sent, 0);
    $("uploads-total").textContent = say("uploads", done, count, formatSize(sent), formatSize(total));
    $("uploads-bar").max = Math.max(total, 1);
    $("uploads-bar").value = sent;
    const list = $("uploads-list");
    for (const item of this.items) if (!item.row.isConnected) list.append(item.row);
    for (const row of [...list.children]) if (!this.items.some((item) => item.row === row)) row.remove();
  }
}

/// One file's upload: begun on the socket (or found again), sent by PATCH, resumed after drops.
class Upload {
  constructor(queue, file, path) {
    this.queue = queue;
    this.file = file;
    this.path = path;
    this.sent = 0;
    this.status = "queued";
    this.row = document.createElement("li");
    this.row.className = "upload";
    const name = document.createElement("span");
    name.className = "upload-name";
    name.textContent = path.split(/:(.*)/s)[1].replace(/^\//, "");
    this.note = document.createElement("span");
    this.note.className = "muted";
    this.note.setAttribute("aria-live", "polite");
    const cancel = document.createElement("button");
    cancel.type = "button";
    cancel.textContent = say("cancel");
    cancel.setAttribute("aria-label", `${say("cancel")} ${file.name}`);
    cancel.onclick = () => this.cancel();
    this.bar = document.createElement("progress");
    this.bar.max = Math.max(file.size, 1);
    this.bar.value = 0;
    this.bar.setAttribute("aria-label", file.name);
    this.row.append(name, cancel, this.bar, this.note);
    this.say(say("queued"));
  }

  /// Where the page remembers this upload's id, for a reload to find it again.
  get memory() {
    return `coffer-upload:${this.path}|${this.file.size}|${this.file.lastModified}`;
  }

  say(text) { this.note.textContent = text; }

  progress(sent) {
    this.sent = sent;
    this.bar.value = sent;
    this.say(`${formatSize(sent)} / ${formatSize(this.file.size)}`);
    this.queue.render();
  }

  async run() {
    this.status = "running";
    try {
      let offset = await this.resume();
      if (offset === null) {
        const begun = await bridge.call("files/upload/begin", { path: this.path, size: this.file.size, resumable: true });
        this.id = begun.uploadId;
        localStorage.setItem(this.memory, this.id);
        offset = 0;
      } else if (offset > 0) {
        this.say(say("resumed", formatSize(offset)));
      }
      this.progress(offset);
      await this.send(offset);
      localStorage.removeItem(this.memory);
      this.status = "done";
      this.progress(this.file.size);
      this.say(say("done"));
    } catch (error) {
      if (this.status === "cancelled") return;
      if (error?.code === -32800) { this.status = "cancelled"; this.say(say("cancel")); return; }
      this.status = "failed";
      this.say(`${say("failed")}: ${error.message || error}`);
      this.row.classList.add("failed");
      failedUnlessCancelled(error);
    }
  }

  /// The offset the server has for this file's upload begun before (a reload), or `null`.
  async resume() {
    const id = localStorage.getItem(this.memory);
    if (!id) return null;
    const answer = await fetch(`/tus/${id}`, { method: "HEAD", headers: tusHeaders }).catch(() => null);
    if (answer?.ok && answer.headers.get("Upload-Length") === String(this.file.size)) {
      this.id = id;
      return Number(answer.headers.get("Upload-Offset"));
    }
    localStorage.removeItem(this.memory);
    return null;
  }

  /// Sends from `offset` to the end in pieces, waiting out dropped connections.
  async send(offset) {
    let delay = 1;
    do {
      if (this.status === "cancelled") throw new Error("cancelled");
      let answer;
      try {
        answer = await this.patch(offset, this.file.slice(offset, Math.min(offset + piece, this.file.size)));
      } catch (lost) {
        if (this.status === "cancelled") throw lost;
        // The server is away: wait, then ask it where the upload stands.
        this.say(say("waiting"));
        await new Promise((resolve) => setTimeout(resolve, delay * 1000));
        delay = Math.min(delay * 2, 15);
        const head = await fetch(`/tus/${this.id}`, { method: "HEAD", headers: tusHeaders }).catch(() => null);
        if (!head) continue;
        if (head.status === 404) {
          localStorage.removeItem(this.memory);
          throw new Error(say("lostUpload"));
        }
        if (head.ok) { offset = Number(head.headers.get("Upload-Offset")); this.say(say("resumed", formatSize(offset))); }
        continue;
      }
      delay = 1;
      if (answer.status === 409 && answer.offset !== null) { offset = answer.offset; continue; }
      if (answer.status !== 204) throw new Error(answer.text || `HTTP ${answer.status}`);
      offset = answer.offset;
      this.progress(offset);
      if (answer.warnings.length) show(answer.warnings.join("\n"));
    } while (offset < this.file.size);
  }

  /// One PATCH: resolves with the answer, rejects when the connection drops.
  patch(offset, body) {
    return new Promise((resolve, reject) => {
      const request = new XMLHttpRequest();
      this.request = request;
      request.open("PATCH", `/tus/${this.id}`);
      request.setRequestHeader("Tus-Resumable", "1.0.0");
      request.setRequestHeader("Upload-Offset", String(offset));
      request.setRequestHeader("Content-Type", "application/offset+octet-stream");
      request.upload.onprogress = (event) => this.progress(offset + event.loaded);
      request.onload = () => {
        const header = request.getResponseHeader("Upload-Offset");
        // What the commit could not do without failing (one header each, percent-encoded).
        const warnings = (request.getResponseHeader("Coffer-Warning") || "").split(",")
          .map((part) => part.trim()).filter(Boolean).map(decodeURIComponent);
        resolve({ status: request.status, offset: header === null ? null : Number(header), text: request.responseText, warnings });
      };
      request.onerror = request.onabort = request.ontimeout = () => reject(new Error(say("lost")));
      request.send(body);
    });
  }

  async cancel() {
    if (["done", "failed", "cancelled"].includes(this.status)) return;
    const wasRunning = this.status === "running";
    this.status = "cancelled";
    this.say(say("cancel"));
    this.request?.abort();
    localStorage.removeItem(this.memory);
    if (wasRunning && this.id) await fetch(`/tus/${this.id}`, { method: "DELETE", headers: tusHeaders }).catch(() => {});
    this.queue.render();
  }
}

export const uploads = new UploadQueue();

/// The files of a drop: plain files, and folders read with their trees
/// (`webkitGetAsEntry`), each with its path inside the drop.
export async function droppedEntries(transfer) {
  const entries = [...transfer.items].map((item) => item.webkitGetAsEntry?.()).filter(Boolean);
  if (!entries.length) return [...transfer.files].map((file) => ({ file, relative: file.name }));
  const found = [];
  async function visit(entry, prefix) {
    if (entry.isFile) {
      const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
      found.push({ file, relative: prefix + entry.name });
    } else if (entry.isDirectory) {
      found.push({ relative: prefix + entry.name });  // made even when empty
      const reader = entry.createReader();
      let batch;
      do {
        batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
        for (const child of batch) await visit(child, `${prefix}${entry.name}/`);
      } while (batch.length);
    }
  }
  for (const entry of entries) await visit(entry, "");
  return found;
}

/// The files an `<input type=file>` picked; a folder picker gives each its path in the tree.
export function pickedEntries(input) {
  return [...input.files].map((file) => ({ file, relative: file.webkitRelativePath || file.name }));
}

