// The audit log (`operator.admin`): whether its hash chain verifies (`audit.verify`, the same
// verdict as `gatehouse audit verify`) and its latest records (`audit.tail`), newest first.

const AUDIT_RECORDS = 50;

class AuditView {
  constructor(gateway) {
    this.gateway = gateway;
    this.allowed = false;
    $("audit-verify").addEventListener("click", () => this.load());
  }

  setScopes(scopes) {
    this.allowed = scopes.includes("operator.admin");
    $("audit-forbidden").hidden = this.allowed;
    $("audit-body").hidden = !this.allowed;
  }

  async load() {
    if (!this.allowed) return;
    const view = $("view-audit");
    view.setAttribute("aria-busy", "true");
    try {
      const [verdict, tail] = await Promise.all([
        this.gateway.request("audit.verify", {}),
        this.gateway.request("audit.tail", { limit: AUDIT_RECORDS }),
      ]);
      this.renderVerdict(auditVerdictFromWire(verdict));
      this.renderRecords(auditRecordsFromWire(tail));
    } catch (error) {
      showMessage("audit-verdict", `Could not read the audit log: ${error.message}`, "error");
    } finally {
      view.setAttribute("aria-busy", "false");
    }
  }

  renderVerdict(verdict) {
    const box = $("audit-verdict");
    box.dataset.valid = String(verdict.valid);
    if (verdict.valid) {
      const range = verdict.records > 0 ? ` (seq 1 to ${verdict.lastSeq})` : "";
      const anchor = verdict.anchoredSeq === undefined ? ""
        : verdict.anchoredSeq < verdict.lastSeq
          ? `; the head anchors seq ${verdict.anchoredSeq}, later records are not yet synced`
          : `; the head anchors seq ${verdict.anchoredSeq}`;
      showMessage("audit-verdict", `Verified: the chain is intact, ${verdict.records} records${range}${anchor}.`, "ok");
      return;
    }
    const problem = verdict.problem;
    const where = [
      problem.line === undefined ? null : `line ${problem.line}`,
      problem.seq === undefined ? null : `seq ${problem.seq}`,
    ].filter(Boolean).join(", ");
    showMessage("audit-verdict",
      `NOT verified (${problem.kind}): ${visibleText(problem.message)}. At ${visibleText(problem.file)}` +
      `${where ? ` ${where}` : ""}; ${verdict.records} records verified before it.`, "error");
  }

  renderRecords(records) {
    $("audit-records").replaceChildren(...records.map((record) => el("li", { class: "entry audit-record", "data-seq": String(record.seq) },
      el("div", { class: "entry-body" },
        el("p", { class: "audit-head" },
          el("span", { class: "badge" }, visibleText(record.kind)), " #", String(record.seq ?? "?"), " ",
          timeElement(record.atMs)),
        details([["Approval", record.approvalId]]),
        el("pre", { class: "command audit-payload" }, visibleSpan(JSON.stringify(record.payload ?? null)))))));
    $("audit-empty").hidden = records.length > 0;
  }
}
