// Per-agent allowlists from `exec-approvals.json`, with last-used data, add and remove.
//
// Edits are whole-file writes: `exec.approvals.set {file, baseHash}` with the hash of the file
// this page last read, so a change made meanwhile (another operator, an allow-always decision)
// is refused instead of overwritten. The page then reloads and says so.

class AllowlistsView {
  constructor(gateway) {
    this.gateway = gateway;
    this.loaded = null; // { file, hash }
    this.canEdit = false;
    $("allowlist-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.add();
    });
    $("allowlist-reload").addEventListener("click", () => this.load());
  }

  /** Whether this token may write the file (`exec.approvals.set` needs `operator.admin`). */
  setScopes(scopes) {
    this.canEdit = scopes.includes("operator.admin");
    $("allowlist-form").hidden = !this.canEdit;
    $("allowlist-readonly").hidden = this.canEdit;
  }

  async load(message) {
    const view = $("view-allowlists");
    view.setAttribute("aria-busy", "true");
    try {
      const payload = await this.gateway.request("exec.approvals.get", {});
      const file = payload && typeof payload.file === "object" && payload.file ? payload.file : {};
      this.loaded = { file, hash: str(payload && payload.hash) };
      this.render();
      this.say(message ? message.text : "", message ? message.kind : "");
    } catch (error) {
      this.say(`Could not load allowlists: ${error.message}`, "error");
    } finally {
      view.setAttribute("aria-busy", "false");
    }
  }

  say(text, kind) {
    showMessage("allowlist-message", text, kind);
  }

  agents() {
    const agents = this.loaded && this.loaded.file.agents;
    return agents && typeof agents === "object" ? agents : {};
  }

  render() {
    const agents = this.agents();
    const names = Object.keys(agents).sort((a, b) => (a === "*" ? -1 : b === "*" ? 1 : a.localeCompare(b)));
    const known = $("allowlist-agents");
    known.replaceChildren(...names.map((name) => el("option", { value: name })));
    const sections = names.map((name) => this.agentSection(name, agents[name] || {}));
    $("allowlists").replaceChildren(...sections);
    $("allowlists-empty").hidden = sections.length > 0;
  }

  agentSection(name, entry) {
    const items = Array.isArray(entry.allowlist) ? entry.allowlist : [];
    const settings = ["security", "ask", "askFallback"]
      .filter((key) => typeof entry[key] === "string")
      .map((key) => `${key}: ${entry[key]}`).join(", ");
    const list = el("ul", { class: "entries" },
      ...items.map((item, index) => this.entryItem(name, item, index)));
    return el("section", { class: "card agent-allowlist" },
      el("h3", {}, name === "*" ? "Every agent (*)" : "Agent ", name === "*" ? null : visibleSpan(name, "agent")),
      settings ? el("p", { class: "hint" }, visibleText(settings)) : null,
      items.length > 0 ? list : el("p", { class: "hint" }, "No allowlist entries."));
  }

  entryItem(agent, item, index) {
    const entry = typeof item === "string" ? { pattern: item } : item && typeof item === "object" ? item : {};
    const pattern = str(entry.pattern);
    const body = el("div", { class: "entry-body" },
      pattern ? el("code", { class: "pattern" }, visibleSpan(pattern)) : el("em", {}, "unreadable entry (kept as written)"),
      details([
        ["Arguments", str(entry.argPattern)],
        ["Source", str(entry.source)],
        ["Last used", formatTime(num(entry.lastUsedAt))],
        ["Last command", str(entry.lastUsedCommand)],
        ["Last resolved path", str(entry.lastResolvedPath)],
      ]));
    const row = el("li", { class: "entry" }, body);
    if (this.canEdit) {
      const remove = el("button", {
        type: "button",
        class: "remove",
        "aria-label": `Remove ${visibleText(pattern ?? "entry")} from ${visibleText(agent)}`,
      }, "Remove");
      remove.addEventListener("click", () => this.remove(agent, index, item));
      row.append(remove);
    }
    return row;
  }

  async add() {
    const agent = $("allowlist-agent").value.trim() || "*";
    const typed = $("allowlist-pattern").value.trim();
    if (!typed) return;
    let pattern = typed;
    let resolvedNote = "";
    if (isProgramName(typed)) {
      // The policy ignores a bare name (it would match any program of that name): the entry
      // takes the path the name resolves to on the gateway host, as an agent's command would.
      const resolved = await this.resolve(typed, agent);
      if (!resolved) {
        this.say(`Not added: ${visibleText(typed)} is not a program on the gateway host's PATH. ` +
          "Give its absolute path (a bare name would match any program of that name).", "error");
        return;
      }
      pattern = resolved;
      resolvedNote = ` (${visibleText(typed)} resolves to it on the gateway host)`;
    }
    const saved = await this.write((file) => {
      file.agents = file.agents && typeof file.agents === "object" ? file.agents : {};
      const entry = file.agents[agent] && typeof file.agents[agent] === "object" ? file.agents[agent] : {};
      entry.allowlist = Array.isArray(entry.allowlist) ? entry.allowlist : [];
      entry.allowlist.push({ pattern });
      file.agents[agent] = entry;
    }, `Added ${visibleText(pattern)}${resolvedNote} for ${agent === "*" ? "every agent" : visibleText(agent)}.`);
    if (saved) $("allowlist-pattern").value = "";
  }

  /** The path `name` resolves to on the gateway host (`exec.policy.check`), or null. */
  async resolve(name, agent) {
    try {
      const result = await this.gateway.request("exec.policy.check",
        { command: name, cwd: "/", agentId: agent === "*" ? "main" : agent });
      const segments = result && Array.isArray(result.segments) ? result.segments : [];
      const path = segments.length === 1 && segments[0] ? str(segments[0].resolvedPath) : null;
      return path && path.startsWith("/") ? path : null;
    } catch (error) {
      return null;
    }
  }

  async remove(agent, index, item) {
    await this.write((file) => {
      const list = file.agents && file.agents[agent] && file.agents[agent].allowlist;
      // The index refers to the file this page rendered; the base hash guarantees it is still that file.
      if (!Array.isArray(list) || JSON.stringify(list[index]) !== JSON.stringify(item)) {
        throw new RpcError("stale", "the entry is no longer where it was shown; reload and try again");
      }
      list.splice(index, 1);
    }, `Removed ${visibleText(str(item && item.pattern) ?? String(item))} from ${agent === "*" ? "every agent" : visibleText(agent)}.`);
  }

  /** Applies `change` to a copy of the loaded file and writes it against the loaded hash. */
  async write(change, done) {
    if (!this.loaded) return false;
    const file = structuredClone(this.loaded.file);
    try {
      change(file);
      await this.gateway.request("exec.approvals.set", { file, baseHash: this.loaded.hash });
    } catch (error) {
      if (isConflict(error)) {
        await this.load({
          kind: "error",
          text: "Not saved: the approvals file changed since this page loaded it (another operator " +
            "or an allow-always decision). The list below is the current file; make your change again.",
        });
      } else {
        this.say(`Not saved: ${error.message}`, "error");
      }
      return false;
    }
    await this.load({ kind: "ok", text: done });
    return true;
  }
}

/** A word a shell would look up on PATH: no slash, no glob, no quoting. */
function isProgramName(text) {
  return /^[A-Za-z0-9._+][A-Za-z0-9._+-]*$/.test(text);
}

function isConflict(error) {
  return error.code === "conflict";
}
