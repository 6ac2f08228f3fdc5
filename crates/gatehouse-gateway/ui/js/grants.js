// Allow-always grants of tool calls (`tools.grants.list`), with a Revoke button for each
// (`tools.grants.revoke`). Reloaded when an approval is answered allow-always, since that is
// what makes a grant.

class GrantsView {
  constructor(gateway) {
    this.gateway = gateway;
    $("grants-reload").addEventListener("click", () => this.load());
  }

  async load(message) {
    const view = $("view-grants");
    view.setAttribute("aria-busy", "true");
    try {
      const grants = grantsFromList(await this.gateway.request("tools.grants.list", {}));
      this.render(grants);
      this.say(message ? message.text : "", message ? message.kind : "");
    } catch (error) {
      this.say(`Could not load grants: ${error.message}`, "error");
    } finally {
      view.setAttribute("aria-busy", "false");
    }
  }

  say(text, kind) {
    showMessage("grants-message", text, kind);
  }

  render(grants) {
    $("grants-list").replaceChildren(...grants.map((grant) => this.item(grant)));
    $("grants-empty").hidden = grants.length > 0;
  }

  item(grant) {
    const words = grantWords(grant.grant);
    const remove = el("button", {
      type: "button",
      class: "remove",
      "data-id": grant.id,
      "aria-label": `Revoke ${visibleText(words)} for ${visibleText(grant.agentId ?? "unknown agent")}`,
    }, "Revoke");
    remove.addEventListener("click", () => this.revoke(grant, words));
    return el("li", { class: "entry grant", "data-id": grant.id },
      el("div", { class: "entry-body" },
        el("code", { class: "pattern" }, visibleSpan(words)),
        details([
          ["Agent", grant.agentId],
          ["Granted by", grant.grantedBy],
          ["Granted", grant.createdAtMs && formatTime(grant.createdAtMs)],
          ["Id", grant.id],
        ])),
      remove);
  }

  async revoke(grant, words) {
    try {
      await this.gateway.request("tools.grants.revoke", { id: grant.id });
    } catch (error) {
      await this.load({ kind: "error", text: `Not revoked: ${error.message}` });
      return;
    }
    await this.load({ kind: "ok", text: `Revoked ${visibleText(words)}.` });
  }
}
