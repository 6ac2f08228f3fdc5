// Control UI shell: login from the URL fragment, then one authenticated WebSocket.
// The token arrives as #token=... (fragments are never sent to servers or in Referer headers),
// is moved to sessionStorage, and removed from the address bar at once.
"use strict";

const TOKEN_KEY = "gatehouse.token";
const $ = (id) => document.getElementById(id);

function takeTokenFromFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get("token");
  if (token) {
    sessionStorage.setItem(TOKEN_KEY, token);
    history.replaceState(null, "", location.pathname + location.search);
  }
}

function setStatus(text) {
  $("status").textContent = text;
}

function showLogin(message) {
  $("session").hidden = true;
  $("login").hidden = false;
  setStatus(message);
}

function connect() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) {
    showLogin("not connected");
    return;
  }
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const socket = new WebSocket(`${scheme}//${location.host}/ws`);
  let nextId = 1;
  setStatus("connecting…");
  socket.addEventListener("open", () => {
    socket.send(JSON.stringify({
      type: "req", id: String(nextId++), method: "connect",
      params: { token, client: { name: "control-ui", version: "0.1.0" } },
    }));
  });
  socket.addEventListener("message", (message) => {
    let frame;
    try { frame = JSON.parse(message.data); } catch { return; }
    if (frame.type === "res" && frame.id === "1") {
      if (!frame.ok) {
        sessionStorage.removeItem(TOKEN_KEY);
        showLogin(`refused: ${frame.error.message}`);
        return;
      }
      $("login").hidden = true;
      $("session").hidden = false;
      $("scopes").textContent = frame.payload.scopes.join(", ");
      $("version").textContent = frame.payload.server.version;
      setStatus("connected");
    } else if (frame.type === "event") {
      const item = document.createElement("li");
      // textContent, never innerHTML: event payloads carry commands chosen by agents.
      item.textContent = `#${frame.seq} ${frame.event} ${JSON.stringify(frame.payload)}`;
      $("events").prepend(item);
    }
  });
  socket.addEventListener("close", (event) => {
    if (!$("login").hidden) return;
    setStatus(`disconnected${event.reason ? ": " + event.reason : ""}`);
  });
}

document.addEventListener("DOMContentLoaded", () => {
  takeTokenFromFragment();
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $("login-token").value.trim());
    $("login-token").value = "";
    connect();
  });
  $("logout").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    location.reload();
  });
  connect();
});
