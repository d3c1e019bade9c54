// The page's questions and dialogs: a name taken, a file changed since it was read, a yes or
// no, a share link, the applications that open a file. Each answers a promise.
import { bridge } from "./bridge.js";
import { $, failed, show } from "./common.js";
import { say } from "./words.js";

/// Shows `dialog` with `text`, and answers the `choices` (button id → answer) clicked; Escape
/// answers `cancelled`.
function choose(dialog, text, choices, cancelled) {
  dialog.querySelector(".question").textContent = text;
  return new Promise((resolve) => {
    const answer = (choice) => () => { dialog.close(); resolve(choice); };
    for (const [id, choice] of Object.entries(choices)) $(id).onclick = answer(choice);
    dialog.oncancel = answer(cancelled);
    dialog.showModal();
  });
}

let keptEditing = false;

/// Whether the person answered the last changed-file question "keep editing" (and forgets
/// it): the save's `changedSinceRead` refusal is then their choice, not news to show.
export function answeredKeepEditing() {
  const answered = keptEditing;
  keptEditing = false;
  return answered;
}

/// The server's `conflict/ask`: a name is taken where this page's row of the defaults table
/// says "ask", or (`kind: "changedSinceRead"`) a save finds its file changed since it was
/// read. The session says what happened (`message`) and which choices there are; the person
/// chooses. For a changed file: overwrite (the other version goes to the trash), save as a
/// copy beside it, keep it in files:/Recovered, or go on editing (cancel: nothing is lost).
export async function conflictAsked(params) {
  if (params.kind === "changedSinceRead") {
    const buttons = { overwrite: "overwrite", "save-copy": "keepBoth", "keep-recovered": "keepInRecovered", "keep-editing": "cancel" };
    const offered = params.choices || Object.values(buttons);
    for (const [id, choice] of Object.entries(buttons)) $(id).hidden = !offered.includes(choice);
    const choice = await choose($("changed"), params.message, buttons, "cancel");
    if (choice === "cancel") keptEditing = true;
    return { choice };
  }
  const choice = await choose($("conflict"), params.message, { "keep-both": "keepBoth", replace: "replace", cancel: "cancel" }, "cancel");
  return { choice };
}

/// A yes-or-no question with the page's own dialog (keyboard and screen readers alike).
export async function confirmed(text, yes) {
  $("confirm-yes").textContent = yes;
  return (await choose($("confirm"), text, { "confirm-yes": true, "confirm-no": false }, false)) === true;
}

/// The share dialog: a link to `node`, made by `shares/create` as every front end makes it,
/// shown as plain text with a copy button.
export function openShare(node) {
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
export async function openWith(node) {
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
