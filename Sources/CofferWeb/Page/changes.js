// What each session changed, with Undo: every visitor of the page is a session, as every REPL
// and RPC or MCP connection is, and the server's journal knows them all (`session/changes`).
import { bridge } from "./bridge.js";
import { $, failed, formatDate, show } from "./common.js";
import { say } from "./words.js";

/// Opens the list of sessions; `changed` runs after an undo (to show the folder again).
export async function openChanges(changed) {
  const dialog = $("changes-dialog");
  await listSessions(changed);
  if (!dialog.open) dialog.showModal();
}

async function listSessions(changed) {
  const { current, sessions } = await bridge.call("session/changes", {});
  const list = $("sessions");
  list.replaceChildren();
  if (sessions.length === 0) {
    const empty = document.createElement("li");
    empty.textContent = say("noChanges");
    list.append(empty);
    return;
  }
  for (const session of sessions) {
    const item = document.createElement("li");
    item.dataset.session = session.id;
    const text = document.createElement("span");
    text.textContent = [session.id, session.frontEnd, formatDate(session.started), say("changeCount", session.count, session.undone),
                        session.undoes ? say("undoes", session.undoes) : "", session.id === current ? say("thisSession") : ""]
      .filter(Boolean).join(" · ");
    item.append(text);
    if (session.undone < session.count) {
      const undo = document.createElement("button");
      undo.type = "button";
      undo.className = "undo-session";
      undo.textContent = say("undo");
      undo.onclick = () => undoSession(session.id, changed).catch(failed);
      item.append(" ", undo);
    }
    list.append(item);
  }
}

async function undoSession(id, changed) {
  const report = await bridge.call("session/undo", { session: id });
  show(say("undone", report.reverted.length, report.skipped.length));
  await changed?.();
  await listSessions(changed);
}
