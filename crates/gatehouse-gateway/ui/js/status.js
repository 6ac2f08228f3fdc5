// Who is logged in where, and what can reach approvers: `gateway.status` read every 15 s and
// after approval events. The header names the gateway and the token; the Status tab lists the
// chat channels (running, stopped with their error), the chat targets a prompt could not reach
// with the last error, the operator clients connected and the pending count. Delivery failures
// also show under Pending, where a missing prompt matters.

const STATUS_REFRESH_MS = 15000;

class StatusView {
  constructor(gateway) {
    this.gateway = gateway;
    $("status-reload").addEventListener("click", () => this.load());
    setInterval(() => {
      if (document.body.dataset.connection === "connected") this.load();
    }, STATUS_REFRESH_MS);
  }

  async load() {
    let status;
    try {
      status = statusFromWire(await this.gateway.request("gateway.status", {}));
    } catch (error) {
      this.showProblem(`Cannot read the gateway's status: ${error.message}`);
      return;
    }
    this.showProblem("");
    this.render(status);
  }

  showProblem(text) {
    for (const id of ["status-problem", "chat-delivery-problem"]) {
      $(id).textContent = text;
      $(id).hidden = !text;
    }
    if (text) $("chat-delivery").hidden = false;
  }

  render(status) {
    $("gateway-origin").textContent = location.origin;
    $("token-name").textContent = visibleText(status.caller ?? "unknown");
    $("scopes").textContent = status.scopes.join(", ") || "none";
    $("status-identity").textContent =
      `${location.origin}, token “${visibleText(status.caller ?? "unknown")}” (${status.scopes.join(", ") || "no scope"})`;
    $("status-pending").textContent = status.pending === undefined ? "unknown" : String(status.pending);
    $("status-clients").replaceChildren(...status.clients.map((client) =>
      el("li", {}, visibleSpan(`${client.client} (token ${client.token})`))));
    $("status-clients-empty").hidden = status.clients.length > 0;
    const channels = status.channels.map((channel) => el("li", { class: "channel running" },
      el("span", { class: "badge allow" }, "running"), " ", visibleSpan(channel)));
    const stopped = status.stopped.map((channel) => el("li", { class: "channel stopped" },
      el("span", { class: "badge deny" }, "stopped"), " ", visibleSpan(channel.channel), ": ",
      visibleSpan(channel.error)));
    $("status-channels").replaceChildren(...channels, ...stopped);
    $("status-channels-empty").hidden = channels.length + stopped.length > 0;
    const failures = () => status.failures.map((failure) => el("li", {},
      visibleSpan(`${failure.channel} → ${failure.target}: `),
      visibleSpan(`${failure.what} after ${failure.attempts} attempts: `),
      visibleSpan(failure.error)));
    $("status-failures").replaceChildren(...failures());
    $("status-failures-empty").hidden = status.failures.length > 0;
    $("chat-failures").replaceChildren(...failures());
    $("chat-delivery").hidden = status.failures.length === 0;
  }
}
