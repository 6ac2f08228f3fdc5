// DOM helpers and the one safe way to show untrusted text.
//
// Everything an agent chooses (command, cwd, agent id) reaches the page only as text nodes:
// this file never assigns innerHTML, and neither may any other. Characters that a terminal or a
// text renderer would hide or reorder (control characters, ANSI escapes, bidi overrides,
// zero-width and look-alike spaces) are replaced by visible markers such as `\x1b` or
// `<U+202E>`, so what a person approves is what will run.

const $ = (id) => document.getElementById(id);

/** Creates an element with attributes (never `innerHTML`) and children (strings become text). */
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

// Hidden or misleading characters: C0 controls, DEL and C1 controls, no-break and other
// look-alike spaces, soft hyphen, combining grapheme joiner, Arabic letter mark, Hangul fillers,
// Mongolian vowel separator, zero-width characters, bidi embeddings, overrides and isolates,
// line/paragraph separators, invisible operators, variation selectors, BOM, interlinear
// annotation marks, tag characters, and lone surrogates (the `u` flag matches only unpaired ones).
const HIDDEN = /[\u0000-\u001f\u007f-\u00a0\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ufe00-\ufe0f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}\ud800-\udfff]/gu;

const NAMED_ESCAPES = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** The visible marker for one hidden character. */
function markerFor(char) {
  if (NAMED_ESCAPES[char]) return NAMED_ESCAPES[char];
  const code = char.codePointAt(0);
  if (code < 0x20 || code === 0x7f) return "\\x" + code.toString(16).padStart(2, "0");
  return "<U+" + code.toString(16).toUpperCase().padStart(4, "0") + ">";
}

/**
 * Splits untrusted text into runs: `{text}` shown as is, `{marker}` for each hidden character.
 * Pure, so the same rule serves the DOM renderer and plain-text uses (titles, announcements).
 */
function visibleRuns(text) {
  const runs = [];
  let last = 0;
  for (const match of String(text).matchAll(HIDDEN)) {
    if (match.index > last) runs.push({ text: text.slice(last, match.index) });
    runs.push({ marker: markerFor(match[0]), newline: match[0] === "\n" });
    last = match.index + match[0].length;
  }
  if (last < text.length) runs.push({ text: text.slice(last) });
  return runs;
}

/** Untrusted text as one plain string with every hidden character shown as its marker. */
function visibleText(text) {
  return visibleRuns(String(text ?? "")).map((run) => run.text ?? run.marker).join("");
}

/** How many hidden characters `text` carries (shown as a warning on the card). */
function hiddenCount(text) {
  return visibleRuns(String(text ?? "")).filter((run) => run.marker).length;
}

/**
 * Appends untrusted text to `parent` with markers styled apart from typed text, so a literal
 * backslash sequence an agent typed cannot pass for a marker. A newline keeps its line break
 * after the marker, so multi-line scripts stay readable.
 */
function appendVisible(parent, text) {
  for (const run of visibleRuns(String(text ?? ""))) {
    if (run.text !== undefined) {
      parent.append(document.createTextNode(run.text));
    } else {
      parent.append(el("span", { class: "marker", title: "hidden character made visible" }, run.marker));
      if (run.newline) parent.append(document.createTextNode("\n"));
    }
  }
  return parent;
}

/** A `<span>` holding untrusted text rendered visibly. */
function visibleSpan(text, className) {
  return appendVisible(el("span", { class: className }), text);
}

const FOLD_CHARS = 240;
const FOLD_LINES = 4;

/**
 * A command block: the full text, rendered visibly, folded when long. The fold only clips the
 * view; an expand button (keyboard reachable, with aria-expanded) shows the rest and says how
 * much is hidden, so nothing is approved unseen without warning.
 */
function commandBlock(command) {
  const text = String(command ?? "");
  const pre = appendVisible(el("pre", { class: "command" }), text);
  const wrapper = el("div", { class: "command-wrap" }, pre);
  const hidden = hiddenCount(text);
  if (hidden > 0) {
    wrapper.prepend(el("p", { class: "warning", role: "note" },
      `${hidden} hidden character${hidden === 1 ? "" : "s"} made visible (highlighted)`));
  }
  const lines = text.split("\n").length;
  if (text.length > FOLD_CHARS || lines > FOLD_LINES) {
    pre.classList.add("folded");
    const toggle = el("button", { type: "button", class: "link", "aria-expanded": "false" });
    const label = () => {
      const folded = pre.classList.contains("folded");
      toggle.textContent = folded
        ? `Show full command (${text.length} characters, ${lines} line${lines === 1 ? "" : "s"})`
        : "Fold command";
      toggle.setAttribute("aria-expanded", String(!folded));
    };
    toggle.addEventListener("click", () => {
      pre.classList.toggle("folded");
      label();
    });
    label();
    wrapper.append(toggle);
  }
  return wrapper;
}

/** A `<dl>` row list from `[label, value]` pairs; values are untrusted and rendered visibly. */
function details(pairs) {
  const list = el("dl", { class: "details" });
  for (const [label, value] of pairs) {
    if (value === undefined || value === null || value === "") continue;
    list.append(el("dt", {}, label), appendVisible(el("dd"), value));
  }
  return list;
}

/** Shows `text` in the message box `id` (styled by `kind`: `ok`, `error`), hidden when empty. */
function showMessage(id, text, kind) {
  const box = $(id);
  box.textContent = text;
  box.className = `message ${kind}`;
  box.hidden = !text;
}

/** A local date and time for an epoch-ms value, or "never". */
function formatTime(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "never";
  return new Date(ms).toLocaleString();
}

/** "4 min 05 s" style remaining time for a countdown. */
function formatRemaining(ms) {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  if (minutes === 0) return `${rest} s`;
  return `${minutes} min ${String(rest).padStart(2, "0")} s`;
}

/** Says `message` through the page's polite live region, for screen readers. */
function announce(message) {
  const region = $("announcer");
  region.textContent = "";
  // A fresh text node after clearing makes screen readers repeat an identical message.
  setTimeout(() => { region.textContent = message; }, 50);
}
