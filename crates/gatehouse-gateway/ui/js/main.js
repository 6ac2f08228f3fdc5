// Start-up: login from the URL fragment, the connection status line, tabs, and wiring the views
// to one Gateway connection.
//
// The token arrives as #token=... (fragments are never sent to servers or in Referer headers),
// is moved to sessionStorage (gone when the tab closes), and removed from the address bar at once.

const TOKEN_KEY = "gatehouse.token";

function takeTokenFromFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get("token");
  if (token) {
    sessionStorage.setItem(TOKEN_KEY, token);
    history.replaceState(null, "", location.pathname + location.search);
  }
}

/** Shows the connection state in the header; `document.body.dataset.connection` mirrors it. */
class StatusLine {
  constructor(onRetry) {
    this.timer = null;
    $("reconnect").addEventListener("click", onRetry);
  }

  show(state, detail) {
    clearInterval(this.timer);
    document.body.dataset.connection = state;
    $("reconnect").hidden = state !== "waiting";
    const text = $("status-text");
    switch (state) {
      case "connecting":
        text.textContent = "Connecting…";
        break;
      case "connected":
        text.textContent = "Connected";
        break;
      case "refused":
        text.textContent = "Not connected";
        break;
      case "waiting": {
        const reason = detail && detail.reason ? `: ${visibleText(detail.reason)}` : "";
        const render = () => {
          const left = Math.max(0, detail.retryAt - Date.now());
          text.textContent = `Disconnected${reason}. Reconnecting in ${formatRemaining(left)}`;
        };
        render();
        this.timer = setInterval(render, 1000);
        break;
      }
      default:
        text.textContent = "Not connected";
    }
  }
}

function showLogin(message) {
  $("session").hidden = true;
  $("login").hidden = false;
  $("logout").hidden = true;
  $("login-message").textContent = message || "";
  $("login-token").focus();
}

/** WAI-ARIA tabs: click or arrow keys select; only the selected tab is in the tab order. */
function setUpTabs() {
  const tabs = [...document.querySelectorAll("[role=tab]")];
  const select = (tab, focus) => {
    for (const other of tabs) {
      const selected = other === tab;
      other.setAttribute("aria-selected", String(selected));
      other.tabIndex = selected ? 0 : -1;
      $(other.getAttribute("aria-controls")).hidden = !selected;
    }
    if (focus) tab.focus();
  };
  for (const [index, tab] of tabs.entries()) {
    tab.addEventListener("click", () => select(tab, false));
    tab.addEventListener("keydown", (event) => {
      const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 };
      if (!(event.key in moves)) return;
      event.preventDefault();
      select(tabs[(moves[event.key] + tabs.length) % tabs.length], true);
    });
  }
  return select;
}

function startSession(token, selectTab) {
  let views = null;
  const status = new StatusLine(() => gateway.start());
  const gateway = new Gateway(token, {
    onState(state, detail) {
      status.show(state, detail);
      if (state === "refused") {
        sessionStorage.removeItem(TOKEN_KEY);
        showLogin(`The gateway refused the token: ${visibleText(detail)}`);
      }
    },
    onReady(hello) {
      const scopes = Array.isArray(hello && hello.scopes) ? hello.scopes.map(String) : [];
      $("login").hidden = true;
      $("session").hidden = false;
      $("logout").hidden = false;
      $("scopes").textContent = scopes.join(", ") || "none";
      $("version").textContent = visibleText(hello && hello.server && hello.server.version);
      views.allowlists.setScopes(scopes);
      views.approvals.resync();
      views.allowlists.load();
      views.grants.load();
      views.chat.load();
    },
    onEvent(name, payload) {
      if (name.startsWith("exec.approval.")) {
        views.approvals.onEvent(name, payload);
        // An allow-always answer to a tool approval makes a grant.
        if (name === "exec.approval.resolved" && payload && payload.decision === "allow-always") {
          views.grants.load();
        }
        // Deliveries run while an approval is pending; a new failure shows up after its events.
        views.chat.load();
      }
    },
  });
  views = {
    approvals: new ApprovalsView(gateway),
    allowlists: new AllowlistsView(gateway),
    grants: new GrantsView(gateway),
    check: new CheckView(gateway),
    chat: new ChatDeliveryView(gateway),
  };
  $("logout").addEventListener("click", () => {
    gateway.stop();
    sessionStorage.removeItem(TOKEN_KEY);
    location.reload();
  });
  // A phone suspends background tabs and drops their sockets: when the page is back in view or
  // the network returns, retry at once instead of waiting out the backoff.
  const retryNow = () => {
    if (document.body.dataset.connection === "waiting") gateway.start();
  };
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) retryNow();
  });
  window.addEventListener("online", retryNow);
  selectTab(document.querySelector("[role=tab]"), false);
  gateway.start();
}

document.addEventListener("DOMContentLoaded", () => {
  takeTokenFromFragment();
  const selectTab = setUpTabs();
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const token = $("login-token").value.trim();
    $("login-token").value = "";
    if (!token) return;
    sessionStorage.setItem(TOKEN_KEY, token);
    location.reload();
  });
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) startSession(token, selectTab);
  else showLogin("");
});
