// "Try a command": asks `exec.policy.check` what the policy would decide, without running or
// requesting anything, and shows the decision with the reason for every segment of the chain.

const CHECK_WORDS = {
  allow: "Allowed: it would run without asking",
  ask: "Needs approval: a person would be asked",
  deny: "Denied: it would not run",
};

class CheckView {
  constructor(gateway) {
    this.gateway = gateway;
    $("check-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.check();
    });
  }

  async check() {
    const command = $("check-command").value;
    const cwd = $("check-cwd").value.trim();
    const agent = $("check-agent").value.trim();
    if (!command.trim()) return;
    if (!cwd || !agent) return;
    const params = { command, cwd, agentId: agent };
    const output = $("check-result");
    output.replaceChildren(el("p", { class: "hint" }, "Checking…"));
    let result;
    try {
      result = await this.gateway.request("exec.policy.check", params);
    } catch (error) {
      output.replaceChildren(el("p", { class: "message error" }, `Check failed: ${error.message}`));
      return;
    }
    output.replaceChildren(...this.render(command, result || {}));
  }

  render(command, result) {
    const decision = str(result.decision);
    const known = Object.hasOwn(CHECK_WORDS, decision);
    const segments = Array.isArray(result.segments) ? result.segments : [];
    const patterns = Array.isArray(result.allowAlwaysPatterns) ? result.allowAlwaysPatterns.filter((p) => typeof p === "string") : [];
    return [
      el("p", { class: `verdict ${known ? decision : "deny"}` },
        el("span", { class: `badge ${known ? decision : "deny"}` }, known ? decision : "unknown"),
        " ", known ? CHECK_WORDS[decision] : "Unknown answer: treat it as denied"),
      el("p", {}, "Reason: ", visibleSpan(str(result.reason) ?? "none given")),
      el("h3", {}, "Command as the policy sees it"),
      commandBlock(command),
      el("h3", {}, `Segments (${segments.length})`),
      segments.length === 0
        ? el("p", { class: "hint" }, "No segments: the command was not split into runnable parts.")
        : el("ol", { class: "segments" }, ...segments.map((segment) => this.segment(segment || {}))),
      patterns.length > 0
        ? el("div", {}, el("h3", {}, "Allow always would add"),
          el("ul", {}, ...patterns.map((pattern) => el("li", {}, el("code", {}, visibleSpan(pattern))))))
        : null,
    ];
  }

  segment(segment) {
    const argv = Array.isArray(segment.argv) ? segment.argv.map(String) : [];
    const satisfied = str(segment.satisfiedBy);
    // Wrappers the policy looked through by name; they run too, so the operator sees where.
    const through = Array.isArray(segment.lookedThrough) ? segment.lookedThrough : [];
    const runsThrough = through
      .map((wrapper) => `${str(wrapper?.word) ?? "?"} (${str(wrapper?.resolvedPath) ?? "not resolved"})`)
      .join(", ");
    return el("li", { class: `segment ${satisfied ? "satisfied" : "unsatisfied"}` },
      el("code", { class: "argv" }, ...argv.flatMap((arg, index) => [index > 0 ? " " : null, visibleSpan(arg, "arg")])),
      details([
        ["Resolved path", str(segment.resolvedPath) ?? "not resolved"],
        ["Satisfied by", satisfied ?? "nothing"],
        ["Runs through", runsThrough],
        ["Reason", str(segment.reason)],
      ]));
  }
}
