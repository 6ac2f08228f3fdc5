// Times OpenClaw's `evaluateShellAllowlistWithAuthorization` over the same command stream the
// `exec` bench evaluates, for the ratio it prints (docs/performance.md, "Exec analysis speed").
//
// Usage: node openclaw_stream.mjs DIST SETUP.json
//   DIST: the `dist` directory of an installed `openclaw` package (2026.9.6 was measured), whose
//         own dependencies resolve from a `node_modules` above it (`@openclaw/fs-safe`,
//         `web-tree-sitter`); nothing of OpenClaw is kept in this repository.
//   SETUP.json: { commands: [...], cwd, path, home, allowlist: [...], trustedDirs: [...] }
// Prints one JSON line: { evaluations, seconds, allowed }.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [dist, setupFile] = process.argv.slice(2);
const setup = JSON.parse(fs.readFileSync(setupFile, "utf8"));

// The evaluator lives in a content-hashed chunk; the plugin SDK's re-export names it.
const sdk = fs.readFileSync(path.join(dist, "plugin-sdk", "infra-runtime.js"), "utf8");
const line = sdk
  .split("\n")
  .find((l) => l.includes(" as evaluateShellAllowlistWithAuthorization") && l.startsWith("import"));
if (!line) throw new Error("evaluateShellAllowlistWithAuthorization not found in the plugin SDK");
const alias = (name) => line.match(new RegExp(`(\\w+) as ${name}\\b`))[1];
const chunk = line.match(/from "\.\.\/([^"]+)"/)[1];
const mod = await import(pathToFileURL(path.join(dist, chunk)).href);
const evaluate = mod[alias("evaluateShellAllowlistWithAuthorization")];
const resolveSafeBins = mod[alias("resolveSafeBins")];

const params = {
  allowlist: setup.allowlist.map((pattern) => ({ pattern })),
  safeBins: resolveSafeBins(undefined),
  cwd: setup.cwd,
  env: { PATH: setup.path, HOME: setup.home },
  platform: process.platform,
  trustedSafeBinDirs: new Set(setup.trustedDirs),
};

// Warm up (the first call loads tree-sitter), then time the stream.
for (const command of setup.commands.slice(0, 200)) await evaluate({ ...params, command });
let allowed = 0;
const start = process.hrtime.bigint();
for (const command of setup.commands) {
  const result = await evaluate({ ...params, command });
  if (result.analysisOk && result.allowlistSatisfied) allowed += 1;
}
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ evaluations: setup.commands.length, seconds, allowed }));
