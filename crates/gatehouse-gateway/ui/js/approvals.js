// Pending approvals (live, with countdown and the three decisions) and the history of decided
// ones. State comes from `exec.approval.list` on every (re)connect and from
// `exec.approval.requested/resolved/expired/cancelled` events in between.

const HISTORY_LIMIT = 200;
const LIST_LIMIT = 1000;
const KNOWN_STATES = new Set(["pending", "allowed", "denied", "expired", "cancelled"]);
// How long a decided card stays in the pending list showing its outcome before it moves.
const LINGER_MS = 3000;

class ApprovalsView {
  constructor(gateway) {
    this.gateway = gateway;
    this.pending = new Map(); // id -> { approval, card, deadline, done }
    this.history = [];
    // Events that arrive while the lists are being fetched wait here and are applied after
    // them, so an approval requested or decided meanwhile is neither lost nor resurrected.
    this.queued = null;
    this.generation = 0;
    this.ticker = setInterval(() => this.tick(), 1000);
  }

  /** Rebuilds both lists from the server after a (re)connect. */
  async resync() {
    // Only the latest resync applies its lists and replays the queue: an older one may still
    // be waiting on a socket that has since closed.
    const generation = ++this.generation;
    this.queued = this.queued || [];
    try {
      await this.reload(generation);
    } finally {
      if (generation === this.generation) {
        const queued = this.queued;
        this.queued = null;
        for (const [name, payload] of queued) this.onEvent(name, payload);
      }
    }
  }

  async reload(generation) {
    let approvals;
    try {
      // At most 1,000 per call: every pending one (oldest first), then the latest for history.
      const [pending, all] = await Promise.all([
        this.gateway.request("exec.approval.list", { state: "pending", limit: LIST_LIMIT }),
        this.gateway.request("exec.approval.list", { limit: LIST_LIMIT, order: "newest-first" }),
      ]);
      approvals = approvalsFromList(pending).concat(
        approvalsFromList(all).filter((approval) => approval.state !== "pending"));
    } catch (error) {
      if (generation === this.generation) this.showProblem(`Could not load approvals: ${error.message}`);
      return;
    }
    if (generation !== this.generation) return;
    this.showProblem("");
    for (const entry of this.pending.values()) entry.card.remove();
    this.pending.clear();
    this.history = [];
    const ordered = approvals.slice().sort((a, b) => (a.createdAtMs ?? 0) - (b.createdAtMs ?? 0));
    for (const approval of ordered) {
      if (approval.state === "pending") this.addPending(approval, approval.expiresAtMs);
      else this.history.unshift(approval);
    }
    this.history.sort((a, b) => (b.resolvedAtMs ?? b.createdAtMs ?? 0) - (a.resolvedAtMs ?? a.createdAtMs ?? 0));
    this.history.length = Math.min(this.history.length, HISTORY_LIMIT);
    this.renderHistory();
    this.updateCount();
  }

  /** Applies one live event. */
  onEvent(name, payload) {
    if (this.queued) {
      this.queued.push([name, payload]);
      return;
    }
    const id = str(payload.id);
    if (!id) return;
    switch (name) {
      case "exec.approval.requested": {
        const approval = approvalFromWire(payload);
        // The deadline is measured on this clock from the server's lifetime, so a skewed
        // browser clock still counts down the right duration.
        const lifetime = (approval.expiresAtMs ?? 0) - (approval.createdAtMs ?? 0);
        const deadline = lifetime > 0 ? Date.now() + lifetime : approval.expiresAtMs;
        if (!this.pending.has(id)) {
          this.addPending(approval, deadline);
          announce(`New approval requested by agent ${visibleText(approval.agentId ?? "unknown")}`);
        }
        break;
      }
      case "exec.approval.resolved":
        this.finish(id, {
          state: stateForDecision(str(payload.decision)),
          decision: str(payload.decision),
          resolvedBy: str(payload.resolvedBy),
          reason: str(payload.reason),
          resolvedAtMs: Date.now(),
        });
        break;
      case "exec.approval.expired":
        this.finish(id, { state: "expired", reason: str(payload.reason), resolvedAtMs: Date.now() });
        break;
      case "exec.approval.cancelled":
        this.finish(id, { state: "cancelled", reason: str(payload.reason), resolvedAtMs: Date.now() });
        break;
      default:
        break;
    }
  }

  showProblem(text) {
    const problem = $("pending-problem");
    problem.textContent = text;
    problem.hidden = !text;
  }

  addPending(approval, deadline) {
    if (!approval.id) return;
    const card = this.card(approval);
    this.pending.set(approval.id, { approval, card, deadline, done: false });
    $("pending-list").append(card);
    this.updateCount();
    this.tick();
  }

  card(approval) {
    const headingId = `approval-${approval.id}`;
    const heading = el("h3", { id: headingId, tabindex: "-1" }, "Agent ",
      visibleSpan(approval.agentId ?? "unknown", "agent"));
    const countdown = el("span", { class: "countdown" });
    const result = el("p", { class: "result", role: "status" });
    const buttons = approval.decisions.map((decision) => el("button", {
      type: "button",
      class: `decision ${decision}`,
      "data-decision": decision,
    }, DECISION_LABELS[decision]));
    const card = el("li", { class: "card approval", "data-id": approval.id },
      el("article", { "aria-labelledby": headingId },
        el("div", { class: "card-head" }, heading, countdown),
        ...(approval.tool ? toolSummary(approval) : [
          commandBlock(approval.command),
          details([
            ["Working directory", approval.cwd],
            ["Resolved path", approval.resolvedPath ?? "not resolved"],
            ["Host", approval.host],
            ["Session", approval.sessionKey],
            ["Requested", approval.createdAtMs && formatTime(approval.createdAtMs)],
          ]),
        ]),
        summaryBlock(approval.summary, headingId),
        el("div", { class: "decisions", role: "group", "aria-label": "Decision" }, ...buttons),
        approval.decisions.includes("allow-always")
          ? el("p", { class: "hint", id: `${headingId}-always` }, allowAlwaysHint(approval))
          : null,
        result));
    const always = buttons.find((button) => button.dataset.decision === "allow-always");
    if (always) always.setAttribute("aria-describedby", `${headingId}-always`);
    for (const button of buttons) {
      button.addEventListener("click", () => this.decide(approval.id, button.dataset.decision));
    }
    return card;
  }

  async decide(id, decision) {
    const entry = this.pending.get(id);
    if (!entry || entry.done) return;
    const { card } = entry;
    const result = card.querySelector(".result");
    this.setButtons(card, false);
    result.textContent = `Sending “${DECISION_LABELS[decision]}”…`;
    try {
      const answer = await this.gateway.request("exec.approval.resolve", { id, decision });
      // The first answer wins; `applied: false` means someone else's answer was first.
      const applied = answer && answer.applied !== false;
      this.finish(id, {
        state: str(answer && answer.state) ?? stateForDecision(decision),
        decision: str(answer && answer.decision) ?? decision,
        resolvedBy: str(answer && answer.resolvedBy),
        resolvedAtMs: Date.now(),
      }, applied ? "" : "Already resolved: ");
    } catch (error) {
      if (error.code === "disconnected" || error.code === "timeout") {
        result.textContent = `Not sent: ${error.message}. Try again once connected.`;
        this.setButtons(card, true);
        return;
      }
      await this.explainRefusal(id, error);
    }
  }

  /** After a refused resolve, asks the server what happened (usually: someone else was faster). */
  async explainRefusal(id, error) {
    const entry = this.pending.get(id);
    if (!entry) return;
    const result = entry.card.querySelector(".result");
    let current;
    try {
      current = approvalFromWire(await this.gateway.request("exec.approval.get", { id }));
    } catch {
      current = undefined;
    }
    if (current && current.state !== "pending") {
      const decided = current.state === "allowed" || current.state === "denied";
      this.finish(id, current, decided ? "Already resolved: " : "");
      return;
    }
    result.textContent = `Refused: ${error.message}`;
    this.setButtons(entry.card, true);
  }

  setButtons(card, enabled) {
    // A disabled button drops focus to the page body; keep keyboard users on this card.
    if (!enabled && card.contains(document.activeElement)) card.querySelector("h3").focus();
    for (const button of card.querySelectorAll("button.decision")) button.disabled = !enabled;
  }

  /** Shows how an approval ended on its card, records it in history, and removes the card soon. */
  finish(id, outcome, prefix = "") {
    const entry = this.pending.get(id);
    if (!entry) {
      this.mergeHistory(id, outcome);
      return;
    }
    if (entry.done) {
      this.mergeHistory(id, outcome);
      return;
    }
    entry.done = true;
    const approval = { ...entry.approval, ...defined(outcome) };
    const { card } = entry;
    card.classList.add("done");
    if (KNOWN_STATES.has(approval.state)) card.classList.add(approval.state);
    this.setButtons(card, false);
    const text = outcomeText(approval);
    card.querySelector(".result").textContent = prefix + text.charAt(0).toUpperCase() + text.slice(1) + ".";
    card.querySelector(".countdown").textContent = "";
    this.updateCount();
    announce(`Approval ${text}`);
    this.history.unshift(approval);
    this.history.length = Math.min(this.history.length, HISTORY_LIMIT);
    this.renderHistory();
    setTimeout(() => this.removeCard(id), LINGER_MS);
  }

  /** A later word about an approval already in history (our own answer, then its event). */
  mergeHistory(id, outcome) {
    const known = this.history.find((approval) => approval.id === id);
    if (!known || !outcome.resolvedBy || known.resolvedBy) return;
    known.resolvedBy = outcome.resolvedBy;
    this.renderHistory();
  }

  removeCard(id) {
    const entry = this.pending.get(id);
    if (!entry) return;
    const hadFocus = entry.card.contains(document.activeElement);
    const next = entry.card.nextElementSibling || entry.card.previousElementSibling;
    entry.card.remove();
    this.pending.delete(id);
    this.updateCount();
    // Keep keyboard users in the list instead of dropping focus to the page body.
    if (hadFocus) (next ? next.querySelector("h3") : $("pending-heading")).focus();
  }

  updateCount() {
    const open = [...this.pending.values()].filter((entry) => !entry.done).length;
    $("pending-count").textContent = String(open);
    $("pending-empty").hidden = this.pending.size > 0;
    document.title = open > 0 ? `(${open}) Gatehouse` : "Gatehouse";
  }

  tick() {
    const now = Date.now();
    for (const { card, deadline, done } of this.pending.values()) {
      if (done) continue;
      const countdown = card.querySelector(".countdown");
      if (typeof deadline !== "number") {
        countdown.textContent = "no expiry known";
        continue;
      }
      const left = deadline - now;
      countdown.textContent = left > 0 ? `expires in ${formatRemaining(left)}` : "expiring…";
      countdown.classList.toggle("urgent", left < 30000);
    }
  }

  renderHistory() {
    const list = $("history-list");
    list.replaceChildren(...this.history.map((approval) => el("li", { class: `card history ${approval.state}` },
      el("div", { class: "card-head" },
        el("span", { class: `badge ${approval.state}` }, approval.state),
        el("span", { class: "outcome" }, outcomeText(approval))),
      ...(approval.tool
        ? [el("p", { class: "tool-name" }, "Tool ", visibleSpan(approval.tool.name, "tool")), toolParams(approval.tool)]
        : [commandBlock(approval.command)]),
      details([
        ["Agent", approval.agentId],
        ["Working directory", approval.cwd],
        ["Resolved path", approval.resolvedPath],
        ["Requested", approval.createdAtMs && formatTime(approval.createdAtMs)],
        ["Ended", approval.resolvedAtMs && formatTime(approval.resolvedAtMs)],
      ]))));
    $("history-empty").hidden = this.history.length > 0;
  }
}

/**
 * What runs, for the person deciding: each program of the chain with where it resolved, what
 * it runs through and whether a rule lets it run or a person decides; the request's variable
 * names; the exact patterns allow-always would store. All of it is untrusted text.
 */
function summaryBlock(summary, headingId) {
  if (!summary) return null;
  const programs = summary.programs.map((program) => {
    const where = program.resolvedPath ?? "unresolved";
    const through = program.lookedThrough.length ? ` via ${program.lookedThrough.join(" → ")}` : "";
    const verdict = program.satisfiedBy ? `allowed by ${program.satisfiedBy}` : `needs a person: ${program.reason}`;
    return el("li", { class: program.satisfiedBy ? "program satisfied" : "program asks" },
      visibleSpan(program.argv.join(" "), "words"), " ",
      visibleSpan(`[${where}${through}]`, "where"), " — ",
      visibleSpan(verdict, "verdict"));
  });
  const always = summary.allowAlwaysPatterns.length
    ? `Allow always stores: ${summary.allowAlwaysPatterns.join(", ")}`
    : "Allow always stores nothing (this exact command is approved only)";
  return el("section", { class: "summary", "aria-labelledby": `${headingId}-runs` },
    el("h4", { id: `${headingId}-runs` }, `Runs ${summary.programs.length} program${summary.programs.length === 1 ? "" : "s"}`),
    el("ol", { class: "programs" }, ...programs),
    summary.envNames.length
      ? el("p", { class: "env" }, "Environment: ", visibleSpan(summary.envNames.join(", "), "names"))
      : null,
    el("p", { class: "always" }, visibleSpan(always, "patterns")));
}

/**
 * What a tool approval shows instead of a command: the tool, its severity, the requester's title
 * and description, and its parameters. All of it is the agent host's text, shown visibly.
 */
function toolSummary(approval) {
  const tool = approval.tool;
  const severity = tool.severity === "info" ? null
    : el("span", { class: `badge severity ${tool.severity === "critical" ? "deny" : "ask"}` }, visibleText(tool.severity));
  return [
    el("p", { class: "tool-name" }, "Tool ", visibleSpan(tool.name, "tool"), severity ? " " : null, severity),
    tool.title ? el("p", { class: "tool-title" }, visibleSpan(tool.title)) : null,
    tool.description ? appendVisible(el("p", { class: "tool-description" }), tool.description) : null,
    toolParams(tool),
    details([
      ["Session", approval.sessionKey],
      ["Requested", approval.createdAtMs && formatTime(approval.createdAtMs)],
    ]),
  ];
}

/** A tool's parameters, name and value, each value shown visibly. */
function toolParams(tool) {
  const list = details(tool.params);
  list.classList.add("tool-params");
  return list;
}

/** What allow-always does for this approval, under its buttons. */
function allowAlwaysHint(approval) {
  if (approval.tool && approval.tool.grant) {
    return `Allow always also grants ${visibleText(grantWords(approval.tool.grant))} to this agent, until the grant is revoked (Grants tab).`;
  }
  return "Allow always also adds the command's programs to this agent's allowlist, so they run without asking next time.";
}

/** `object` without its undefined fields, so spreading it never erases known values. */
function defined(object) {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));
}
