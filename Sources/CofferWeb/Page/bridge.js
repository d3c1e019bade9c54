// JSON-RPC 2.0 over the WebSocket at /rpc: the same methods `coffer rpc` answers.
import { show } from "./common.js";
import { say } from "./words.js";

/// Calls the server's methods, passes its notifications on, and answers the requests it sends
/// (`conflict/ask`: the session's question when a name is taken). When the socket drops it
/// fails what was in flight, says so, and opens it again, waiting longer each time.
class Bridge {
  constructor() {
    this.next = 1;
    this.waiting = new Map();
    this.retry = null;
    this.onNotification = () => {};
    this.onRequest = async (method) => { throw new Error(`unknown request ${method}`); };
    this.onReconnect = async () => {};
    this.onStateChange = () => {};
  }

  get connected() { return this.socket?.readyState === WebSocket.OPEN; }

  open() {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/rpc`);
      this.socket = socket;
      socket.onopen = () => { socket.wasOpen = true; this.onStateChange(true); resolve(); };
      socket.onerror = reject;
      socket.onclose = () => {
        // A socket that never opened is a failed try, which `reconnect` retries itself.
        if (this.socket !== socket || !socket.wasOpen) return;
        this.onStateChange(false);
        for (const { fail } of this.waiting.values()) fail({ message: say("lost") });
        this.waiting.clear();
        if (this.opened) this.reconnect(1);
      };
      socket.onmessage = (event) => this.received(JSON.parse(event.data));
    });
  }

  received(message) {
    if (message.method && message.id !== undefined) {
      this.answer(message);
    } else if (message.id !== undefined && this.waiting.has(message.id)) {
      const { done, fail } = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (message.error) return fail(message.error);
      // What an operation could not do without failing (attributes a copy lost) is said, not dropped.
      const warnings = message.result?.warnings;
      if (warnings?.length) show(warnings.map((warning) => warning.message).join("\n"));
      done(message.result);
    } else if (message.method) {
      this.onNotification(message.method, message.params || {});
    }
  }

  /// Opens the socket again after `delay` seconds, doubling up to 15 s while the server is
  /// away (a restart, a laptop that slept), then lets the page catch up without a reload.
  reconnect(delay) {
    if (this.retry) return;
    show(say("reconnecting", delay), { error: true });
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

  /// Sends a request; `{id, result}`: its id (to cancel it) and a promise of its answer.
  start(method, params = {}) {
    const id = this.next++;
    const result = new Promise((done, fail) => {
      if (!this.connected) return fail({ message: say("lost") });
      this.waiting.set(id, { done, fail });
      this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
    return { id, result };
  }

  call(method, params = {}) { return this.start(method, params).result; }

  notify(method, params = {}) {
    if (this.connected) this.socket.send(JSON.stringify({ jsonrpc: "2.0", method, params }));
  }

  cancel(id) { this.notify("$/cancelRequest", { id }); }

  async answer({ id, method, params }) {
    let reply;
    try {
      reply = { jsonrpc: "2.0", id, result: await this.onRequest(method, params || {}) };
    } catch (error) {
      reply = { jsonrpc: "2.0", id, error: { code: -32601, message: String(error.message || error) } };
    }
    if (this.connected) this.socket.send(JSON.stringify(reply));
  }
}

export const bridge = new Bridge();
