// The one authenticated WebSocket to the gateway: `connect` handshake, request/response by id,
// events, and reconnection with exponential backoff. Views never touch the socket; they call
// `request` and subscribe to events, and resynchronize from the list methods on every
// (re)connect. The list is the whole truth, so the UI does not ask `connect` for a replay
// (`since`): replayed events would only repeat what the list already shows.

/** An RPC failure with the server's stable `code` (or a local one: `disconnected`, `timeout`). */
class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

const BACKOFF_FIRST_MS = 1000;
const BACKOFF_MAX_MS = 30000;
const REQUEST_TIMEOUT_MS = 20000;
// Handshake refusals that a retry cannot fix: the token is wrong, so ask for another one.
const LOGIN_ERRORS = new Set(["unauthorized", "invalid_params"]);

class Gateway {
  /**
   * `handlers`: `onState(state, detail)` with state `connecting | connected | waiting | refused`,
   * `onReady(hello)` after each successful handshake, `onEvent(name, payload, seq)`.
   */
  constructor(token, handlers) {
    this.token = token;
    this.handlers = handlers;
    this.socket = null;
    this.nextId = 1;
    this.pending = new Map();
    this.failures = 0;
    this.retryTimer = null;
    this.stopped = false;
  }

  /** Opens the socket (now, cancelling any scheduled retry). */
  start() {
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.stopped) return;
    this.handlers.onState("connecting");
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(`${scheme}//${location.host}/ws`);
    this.socket = socket;
    let refused = false;
    socket.addEventListener("open", () => {
      this.send(socket, "connect", {
        token: this.token,
        client: { name: "control-ui", version: "0.1.0" },
      }).then((hello) => {
        this.failures = 0;
        this.handlers.onState("connected");
        this.handlers.onReady(hello);
      }, (error) => {
        refused = LOGIN_ERRORS.has(error.code);
        if (refused) {
          this.stopped = true;
          this.handlers.onState("refused", error.message);
        }
        // Closing ends this attempt; unless the token was refused, the close handler retries.
        socket.close();
      });
    });
    socket.addEventListener("message", (message) => this.receive(message.data));
    socket.addEventListener("close", (event) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.failAll(new RpcError("disconnected", "the connection to the gateway closed"));
      if (refused || this.stopped) return;
      this.scheduleRetry(event.reason);
    });
  }

  /** Closes for good (log out). */
  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    if (this.socket) this.socket.close(1000, "logged out");
  }

  /** Calls a method; resolves with its payload or rejects with an `RpcError`. */
  request(method, params) {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(new RpcError("disconnected", "not connected to the gateway"));
    }
    return this.send(this.socket, method, params || {});
  }

  send(socket, method, params) {
    const id = String(this.nextId++);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new RpcError("timeout", `no answer to ${method} within ${REQUEST_TIMEOUT_MS / 1000} s`));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      socket.send(JSON.stringify({ type: "req", id, method, params }));
    });
  }

  receive(data) {
    let frame;
    try {
      frame = JSON.parse(data);
    } catch {
      return;
    }
    if (frame.type === "res") {
      const waiting = this.pending.get(frame.id);
      if (!waiting) return;
      this.pending.delete(frame.id);
      clearTimeout(waiting.timer);
      if (frame.ok) {
        waiting.resolve(frame.payload);
      } else {
        const error = frame.error || {};
        waiting.reject(new RpcError(error.code || "internal", error.message || "request failed", error.data));
      }
    } else if (frame.type === "event") {
      this.handlers.onEvent(frame.event, frame.payload || {}, frame.seq);
    }
  }

  failAll(error) {
    for (const waiting of this.pending.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(error);
    }
    this.pending.clear();
  }

  /** Waits 1 s, 2 s, 4 s … up to 30 s (with ±20 % jitter so many pages do not retry in step). */
  scheduleRetry(reason) {
    const base = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** this.failures);
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    this.failures += 1;
    this.handlers.onState("waiting", { reason, retryAt: Date.now() + delay });
    this.retryTimer = setTimeout(() => this.start(), delay);
  }
}
