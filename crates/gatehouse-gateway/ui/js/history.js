// History: settled approvals from `exec.approval.history`, newest first, with free-text search,
// filters (agent, outcome, tool, who decided) and paging through everything the gateway keeps.
// Reloaded when an approval ends (the Pending view says so), so it follows live events.

const HISTORY_PAGE = 50;
// Approvals that end together reload the list once.
const HISTORY_RELOAD_DELAY_MS = 250;

class HistoryView {
  constructor(gateway) {
    this.gateway = gateway;
    this.offset = 0;
    this.filters = {};
    this.reloadTimer = null;
    this.generation = 0;
    $("history-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.search();
    });
    $("history-outcome").addEventListener("change", () => this.search());
    $("history-clear").addEventListener("click", () => {
      $("history-form").reset();
      this.search();
    });
    $("history-newer").addEventListener("click", () => this.page(-HISTORY_PAGE));
    $("history-older").addEventListener("click", () => this.page(HISTORY_PAGE));
  }

  /** Applies the form's filters from the first page. */
  search() {
    const value = (id) => $(id).value.trim();
    this.filters = {
      query: value("history-query"),
      agentId: value("history-agent"),
      outcome: value("history-outcome"),
      tool: value("history-tool"),
      resolvedBy: value("history-who"),
    };
    this.offset = 0;
    this.load();
  }

  page(step) {
    this.offset = Math.max(0, this.offset + step);
    this.load();
  }

  /** Reloads the current page a moment after an approval ended. */
  changed() {
    clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => this.load(), HISTORY_RELOAD_DELAY_MS);
  }

  async load() {
    const generation = ++this.generation;
    const params = { offset: this.offset, limit: HISTORY_PAGE };
    for (const [name, value] of Object.entries(this.filters)) if (value) params[name] = value;
    let result;
    try {
      result = await this.gateway.request("exec.approval.history", params);
    } catch (error) {
      if (generation === this.generation) showMessage("history-message", `Could not load history: ${error.message}`, "error");
      return;
    }
    if (generation !== this.generation) return;
    showMessage("history-message", "", "");
    const page = historyFromWire(result);
    // A page emptied by approvals leaving the window steps back rather than showing nothing.
    if (page.approvals.length === 0 && this.offset > 0 && page.total > 0) {
      this.offset = Math.max(0, Math.floor((page.total - 1) / HISTORY_PAGE) * HISTORY_PAGE);
      this.load();
      return;
    }
    this.render(page);
  }

  render(page) {
    $("history-list").replaceChildren(...page.approvals.map(historyCard));
    const filtered = Object.values(this.filters).some(Boolean);
    $("history-empty").hidden = page.approvals.length > 0;
    $("history-empty").textContent = filtered ? "Nothing matches these filters." : "No decisions yet.";
    const first = page.approvals.length ? this.offset + 1 : 0;
    const last = this.offset + page.approvals.length;
    const searched = page.complete ? "" : ` among the newest ${page.window.toLocaleString()} approvals`;
    $("history-summary").textContent = page.total
      ? `Showing ${first}–${last} of ${page.total}${filtered ? " matching" : ""}${searched}.`
      : "";
    $("history-newer").disabled = this.offset === 0;
    $("history-older").disabled = last >= page.total;
  }
}

/** One settled approval: outcome and who, the command or tool call, and where and when. */
function historyCard(approval) {
  return el("li", { class: `card history ${approval.state}`, "data-id": approval.id },
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
      ["Requested", approval.createdAtMs && timeElement(approval.createdAtMs)],
      ["Ended", approval.resolvedAtMs && timeElement(approval.resolvedAtMs)],
    ]));
}
