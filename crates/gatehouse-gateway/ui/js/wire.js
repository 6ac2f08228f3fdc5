// Reading the gateway's payloads (docs/protocol.md) into the shapes the views use, in one
// place, so a protocol change touches this file only. Anything missing or of the wrong type
// becomes `undefined`, and views show "unknown" rather than guessing.

const str = (value) => (typeof value === "string" ? value : undefined);
const num = (value) => (typeof value === "number" && Number.isFinite(value) ? value : undefined);

/**
 * The decisions a person may give. Allow-always only when the server offers it: the approval
 * lists `allowedDecisions`, in the `requested` event and in `list` and `get` alike (empty once
 * settled, and without allow-always for a pending approval an earlier gateway run created).
 */
function offeredDecisions(raw) {
  const allowAlways = Array.isArray(raw.allowedDecisions) && raw.allowedDecisions.includes("allow-always");
  return allowAlways ? ["allow-once", "allow-always", "deny"] : ["allow-once", "deny"];
}

/** An approval from an `exec.approval.*` event, `get` or `list` payload. */
function approvalFromWire(raw) {
  const request = raw.request && typeof raw.request === "object" ? raw.request : raw;
  return {
    id: str(raw.id),
    command: str(request.command) ?? "",
    argv: Array.isArray(request.argv) ? request.argv.map(String) : [],
    cwd: str(request.cwd),
    host: str(request.host),
    agentId: str(request.agentId),
    sessionKey: str(request.sessionKey),
    resolvedPath: str(request.resolvedPath),
    security: str(request.security),
    ask: str(request.ask),
    createdAtMs: num(raw.createdAtMs),
    expiresAtMs: num(raw.expiresAtMs),
    state: str(raw.state) ?? "pending",
    decision: str(raw.decision),
    resolvedBy: str(raw.resolvedBy),
    reason: str(raw.reason),
    resolvedAtMs: num(raw.resolvedAtMs),
    decisions: offeredDecisions(raw),
    summary: summaryFromWire(request.summary),
    tool: toolFromWire(request.tool),
  };
}

const strings = (value) => (Array.isArray(value) ? value.filter((item) => typeof item === "string") : []);

/**
 * What approvers are shown of what runs: every program of the chain, the request's variable
 * names and the patterns allow-always would store; `undefined` for an approval stored before
 * the gateway kept it.
 */
function summaryFromWire(raw) {
  if (!raw || typeof raw !== "object" || !Array.isArray(raw.programs)) return undefined;
  return {
    programs: raw.programs.filter((program) => program && typeof program === "object").map((program) => ({
      argv: strings(program.argv),
      resolvedPath: str(program.resolvedPath),
      lookedThrough: strings(program.lookedThrough),
      satisfiedBy: str(program.satisfiedBy),
      reason: str(program.reason) ?? "",
    })),
    envNames: strings(raw.envNames),
    allowAlwaysPatterns: strings(raw.allowAlwaysPatterns),
  };
}

/** The tool part of an approval (`request.tool`), or `undefined` for an exec approval. */
function toolFromWire(raw) {
  if (!raw || typeof raw !== "object") return undefined;
  const params = Array.isArray(raw.params) ? raw.params : [];
  return {
    name: str(raw.name) ?? "unknown tool",
    params: params
      .filter((param) => param && typeof param === "object")
      .map((param) => [str(param.name) ?? "?", str(param.value) ?? ""]),
    title: str(raw.title),
    description: str(raw.description),
    severity: str(raw.severity) ?? "info",
    grant: grantFromWire(raw.grant),
  };
}

/** What a grant covers (`{tool, scope, values}`), or `undefined`. */
function grantFromWire(raw) {
  if (!raw || typeof raw !== "object") return undefined;
  return {
    tool: str(raw.tool) ?? "?",
    scope: str(raw.scope) ?? "?",
    values: Array.isArray(raw.values) ? raw.values.map((value) => String(value)) : [],
  };
}

/** A grant's coverage in words: "write at or under /ws/a.md", "web_fetch of host example.com". */
function grantWords(grant) {
  switch (grant.scope) {
    case "paths":
      return `${grant.tool} at or under ${grant.values.join(", ")}`;
    case "hosts":
      return `${grant.tool} of host ${grant.values.join(", ")}`;
    case "tool":
      return `${grant.tool} calls that touch no file and no URL`;
    default:
      return `${grant.tool} (${grant.scope})`;
  }
}

/** The grants of a `tools.grants.list` payload. */
function grantsFromList(payload) {
  const items = payload && Array.isArray(payload.grants) ? payload.grants : [];
  return items.filter((item) => item && typeof item === "object").map((raw) => ({
    id: str(raw.id),
    agentId: str(raw.agentId),
    grant: grantFromWire(raw) ?? { tool: "?", scope: "?", values: [] },
    createdAtMs: num(raw.createdAtMs),
    grantedBy: str(raw.grantedBy),
  }));
}

/** The approvals of an `exec.approval.list` payload. */
function approvalsFromList(payload) {
  const items = Array.isArray(payload) ? payload : payload && payload.approvals;
  return Array.isArray(items) ? items.filter((item) => item && typeof item === "object").map(approvalFromWire) : [];
}

/** The terminal state an event or decision implies. */
function stateForDecision(decision) {
  return decision === "deny" ? "denied" : "allowed";
}

const DECISION_LABELS = {
  "allow-once": "Allow once",
  "allow-always": "Allow always",
  deny: "Deny",
};

/** Words for how an approval ended, e.g. "allowed once by admin". */
function outcomeText(approval) {
  const why = approval.reason ? `: ${visibleText(approval.reason)}` : "";
  const by = approval.resolvedBy ? ` by ${visibleText(approval.resolvedBy)}${why}` : why;
  switch (approval.state) {
    case "allowed":
      return approval.decision === "allow-always" ? `allowed always${by}` : `allowed once${by}`;
    case "denied":
      return `denied${by}`;
    case "expired":
      return `expired${approval.reason ? ` (${visibleText(approval.reason)})` : ""}`;
    case "cancelled":
      return `cancelled${approval.reason ? ` (${visibleText(approval.reason)})` : ""}`;
    case "pending":
      return "pending";
    default:
      return `unknown state ${visibleText(approval.state)}`;
  }
}
