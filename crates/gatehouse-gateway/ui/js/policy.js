// The effective policy of one agent (`exec.policy.effective`): security, ask and askFallback as
// config and `exec-approvals.json` compose them, the allowlist that applies, the safe bins, and
// the elevated gates. What requests are judged under, not what a file says alone.

class PolicyView {
  constructor(gateway) {
    this.gateway = gateway;
    $("policy-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.load();
    });
  }

  async load() {
    const agentId = $("policy-agent").value.trim() || "main";
    const view = $("view-policy");
    view.setAttribute("aria-busy", "true");
    try {
      const policy = agentPolicyFromWire(await this.gateway.request("exec.policy.effective", { agentId }));
      showMessage("policy-message", "", "");
      this.render(policy);
    } catch (error) {
      $("policy-result").replaceChildren();
      showMessage("policy-message", `Could not read the policy: ${error.message}`, "error");
    } finally {
      view.setAttribute("aria-busy", "false");
    }
  }

  render(policy) {
    $("policy-agents").replaceChildren(...policy.knownAgents.map((agent) => el("option", { value: agent })));
    const yes = (flag) => (flag ? "yes" : "no");
    const gates = policy.elevated;
    const senders = (channels) => (channels.length
      ? channels.map(([channel, entries]) => `${channel}: ${entries.join(", ") || "nobody"}`).join("; ")
      : "nobody");
    const allowlist = policy.allowlist.length
      ? el("ul", { class: "entries policy-allowlist" }, ...policy.allowlist.map((entry) => el("li", { class: "entry" },
        el("code", { class: "pattern" }, visibleSpan(entry.pattern)),
        entry.argPattern ? el("span", { class: "hint" }, " arguments ", visibleSpan(entry.argPattern)) : null)))
      : el("p", { class: "hint" }, "Empty: only safe bins (and skills, when allowed) run without a person.");
    $("policy-result").replaceChildren(
      el("h3", { id: "policy-heading" }, "Agent ", visibleSpan(policy.agentId, "agent")),
      details([
        ["Security", policy.security],
        ["Ask", policy.ask],
        ["Unanswered (askFallback)", policy.askFallback],
        ["Strict inline eval", yes(policy.strictInlineEval)],
        ["Auto-allow skills", yes(policy.autoAllowSkills)],
        ["Safe bins", policy.safeBins.join(", ") || "none"],
      ]),
      el("h4", {}, "Allowlist"),
      allowlist,
      el("h4", {}, "Elevated mode"),
      details([
        ["Available", gates.enabled ? "yes" : "no"],
        ["tools.elevated.enabled", yes(gates.globalEnabled)],
        ["Agent's enabled", gates.agentEnabled === undefined ? "not set" : yes(gates.agentEnabled)],
        ["Who may switch it", senders(gates.allowFrom)],
        ["Agent's allowFrom", gates.agentAllowFrom ? senders(gates.agentAllowFrom) : "not set"],
        ["Default level", gates.defaultLevel ?? "not set"],
      ]));
    $("policy-result").dataset.agent = policy.agentId;
  }
}
