//! `tools.*` and `agents.list[].tools.*`: which tools an agent may call, and how `exec` runs.

use std::collections::BTreeMap;
use std::path::PathBuf;

use gatehouse_policy::{Ask, Security};
use serde::Deserialize;

use super::de;

/// A named starting set of tools, before allow/deny lists narrow or extend it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolProfile {
    /// Only `session_status`.
    Minimal,
    /// File, runtime, web and memory tools for coding agents.
    Coding,
    /// `message` plus the limited sessions set.
    Messaging,
    /// No restriction.
    Full,
}

/// The allow/deny lists of one scope. OpenClaw refuses `allow` and `alsoAllow` together in
/// one scope (it is ambiguous whether `alsoAllow` extends `allow` or the profile); so do we.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolPolicyConfig {
    /// Starting set for this scope (`tools` and `byProvider` entries only).
    pub profile: Option<ToolProfile>,
    /// Tools (names, globs, `group:*`) this scope allows; absent or empty filters nothing.
    pub allow: Option<Vec<String>>,
    /// Tools added to the allowed set without replacing it.
    pub also_allow: Option<Vec<String>>,
    /// Tools removed; deny always wins.
    pub deny: Option<Vec<String>>,
}

/// `tools.sandbox.tools` / `tools.subagents.tools`: a policy without a profile.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScopedToolPolicy {
    /// Tools allowed in this scope.
    pub allow: Option<Vec<String>>,
    /// Tools added to the scope's default allowed set.
    pub also_allow: Option<Vec<String>>,
    /// Tools removed in this scope.
    pub deny: Option<Vec<String>>,
}

/// Wrapper matching OpenClaw's `{ tools: { allow, alsoAllow, deny } }` nesting under
/// `tools.sandbox` and `tools.subagents`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ScopedTools {
    /// The policy of this scope.
    pub tools: Option<ScopedToolPolicy>,
}

/// The global `tools` section, and the same keys under `agents.list[].tools`, where an agent's
/// lists add a pipeline step and its `exec` is merged over the global one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsConfig {
    /// Base profile.
    pub profile: Option<ToolProfile>,
    /// Global allow list.
    pub allow: Option<Vec<String>>,
    /// Global additions.
    pub also_allow: Option<Vec<String>>,
    /// Global deny list.
    pub deny: Option<Vec<String>>,
    /// Overrides keyed by provider id (`openai`) or `provider/model` (`openai/gpt-5`).
    #[serde(default)]
    pub by_provider: BTreeMap<String, ToolPolicyConfig>,
    /// Elevated (`/elevated`) gate.
    pub elevated: Option<ElevatedConfig>,
    /// Exec tool settings; its presence also implies `exec` and `process`.
    pub exec: Option<ExecConfig>,
    /// Filesystem tool settings; its presence also implies `read`, `write` and `edit`.
    pub fs: Option<FsConfig>,
    /// Sandbox tool policy defaults.
    pub sandbox: Option<ScopedTools>,
    /// Sub-agent tool policy defaults (global `tools` only; refused per agent).
    pub subagents: Option<ScopedTools>,
    /// What `read` (and the read half of `edit`) may open.
    pub read: Option<PathAccessSection>,
    /// What `write`, `edit` and `apply_patch` may change.
    pub write: Option<PathAccessSection>,
    /// Tools (entries as in `allow`) whose every call asks a person, unless a grant covers it;
    /// the agent's list adds to the global one.
    pub always_ask: Option<Vec<String>>,
    /// `web.fetch`: the URL rules of `web_fetch` and of any other tool's URL parameter.
    pub web: Option<WebConfig>,
}

/// `tools.read` / `tools.write`: path globs and a size limit for the file tools.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PathAccessSection {
    /// When set, a path must match one of these globs.
    pub allow: Option<Vec<String>>,
    /// Globs that refuse a path (deny wins; a directory covers what is under it).
    pub deny: Option<Vec<String>>,
    /// The largest file read, or content written, in bytes.
    pub max_size_bytes: Option<u64>,
}

/// `tools.web`: only `fetch` is Gatehouse's to judge (`search` is OpenClaw's and ignored).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebConfig {
    /// `tools.web.fetch`.
    pub fetch: Option<WebFetchConfig>,
}

/// `tools.web.fetch`: which hosts `web_fetch` (and URL parameters of other tools) may reach.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebFetchConfig {
    /// Host patterns; when set, a host must match one.
    pub allowed_domains: Option<Vec<String>>,
    /// Host patterns that refuse (deny wins).
    pub denied_domains: Option<Vec<String>>,
    /// OpenClaw's private-network switches.
    pub ssrf_policy: Option<SsrfPolicySection>,
}

/// `ssrfPolicy` of `tools.web.fetch` and `browser` (OpenClaw's `SsrFPolicy`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SsrfPolicySection {
    /// Loopback, private, link-local, CGNAT, unique-local addresses and local names allowed.
    pub dangerously_allow_private_network: Option<bool>,
    /// The legacy spelling of `dangerouslyAllowPrivateNetwork`.
    pub allow_private_network: Option<bool>,
    /// Exact hosts exempt from the private-network checks.
    pub allowed_hostnames: Option<Vec<String>>,
    /// Host patterns a host must match (with `allowedDomains`, both must).
    pub hostname_allowlist: Option<Vec<String>>,
    /// `198.18.0.0/15` allowed (fake-IP proxies).
    pub allow_rfc2544_benchmark_range: Option<bool>,
    /// `fc00::/7` allowed (fake-IP proxies).
    pub allow_ipv6_unique_local_range: Option<bool>,
}

/// The top-level `browser` section: only its `ssrfPolicy` is Gatehouse's to judge.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserConfig {
    /// The URL rules of browser navigation.
    pub ssrf_policy: Option<SsrfPolicySection>,
}

/// `tools.elevated` and `agents.list[].tools.elevated`: who may switch `/elevated`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElevatedConfig {
    /// Whether `/elevated` is available at all (OpenClaw's default is true).
    pub enabled: Option<bool>,
    /// Authorized senders per channel id (`*`, bare ids, `id:`, `username:` … prefixes).
    #[serde(default, deserialize_with = "allow_from")]
    pub allow_from: BTreeMap<String, Vec<String>>,
}

fn allow_from<'de, D>(deserializer: D) -> Result<BTreeMap<String, Vec<String>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let raw = BTreeMap::<String, Vec<de::Id>>::deserialize(deserializer)?;
    Ok(raw
        .into_iter()
        .map(|(channel, ids)| (channel, ids.into_iter().map(|id| id.0).collect()))
        .collect())
}

/// `tools.fs`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FsConfig {
    /// `read`, `write`, `edit` and `apply_patch` stay inside the agent's workspace (OpenClaw's
    /// default: `false`).
    pub workspace_only: Option<bool>,
    /// Path globs refused to every file tool, added to the built-in denied files.
    pub deny_paths: Option<Vec<String>>,
}

/// `tools.exec` (global) and `agents.list[].tools.exec` (per agent).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecConfig {
    /// `deny | allowlist | full`.
    #[serde(default, deserialize_with = "de::opt_parsed")]
    pub security: Option<Security>,
    /// `off | on-miss | always`.
    #[serde(default, deserialize_with = "de::opt_parsed")]
    pub ask: Option<Ask>,
    /// What an unanswered approval falls back to (`deny | allowlist | full`).
    #[serde(default, deserialize_with = "de::opt_parsed")]
    pub ask_fallback: Option<Security>,
    /// Stdin-only filters allowed without an allowlist entry; absent = the default set,
    /// `[]` = none.
    pub safe_bins: Option<Vec<String>>,
    /// Directories (beyond `/bin` and `/usr/bin`) safe bins may resolve into.
    pub safe_bin_trusted_dirs: Option<Vec<String>>,
    /// Argument profiles for custom safe bins, keyed by binary name.
    #[serde(default)]
    pub safe_bin_profiles: BTreeMap<String, SafeBinProfileConfig>,
    /// Inline interpreter code (`python -c`, `node -e`, …) always needs approval.
    pub strict_inline_eval: Option<bool>,
    /// Trusted skill binaries run without an allowlist entry.
    pub auto_allow_skills: Option<bool>,
    /// The skill binaries `autoAllowSkills` trusts (Gatehouse extension).
    #[serde(default)]
    pub skill_bins: Vec<SkillBinConfig>,
    /// `apply_patch` settings.
    pub apply_patch: Option<ApplyPatchConfig>,
}

/// One custom safe-bin argument profile.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SafeBinProfileConfig {
    /// Fewest positional arguments.
    pub min_positional: Option<usize>,
    /// Most positional arguments.
    pub max_positional: Option<usize>,
    /// Flags that take a value and are allowed.
    pub allowed_value_flags: Option<Vec<String>>,
    /// Flags that are refused.
    pub denied_flags: Option<Vec<String>>,
}

/// A skill binary trusted for auto-allow, in either of OpenClaw's forms: a bare name (resolved
/// on the gateway's `PATH` when the config is read; an empty `resolved_path` when it resolves
/// nowhere, which trusts nothing) or `{ name, resolvedPath }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillBinConfig {
    /// The command name.
    pub name: String,
    /// The absolute path it must resolve to.
    pub resolved_path: PathBuf,
}

/// The `{ name, resolvedPath }` form.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SkillBinEntry {
    name: String,
    resolved_path: PathBuf,
}

/// Dispatches on the value's type rather than trying each form in turn (`untagged`), so a wrong
/// value inside the object form is reported at its own key and unknown keys there are seen.
impl<'de> Deserialize<'de> for SkillBinConfig {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Form;
        impl<'de> serde::de::Visitor<'de> for Form {
            type Value = SkillBinConfig;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a command name or { name, resolvedPath }")
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Self::Value, E> {
                let path = std::env::var("PATH").unwrap_or_default();
                let resolved_path = gatehouse_policy::exec::SkillBin::on_path(name, &path)
                    .map(|bin| bin.resolved_path)
                    .unwrap_or_default();
                Ok(SkillBinConfig {
                    name: name.to_owned(),
                    resolved_path,
                })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                let entry =
                    SkillBinEntry::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(SkillBinConfig {
                    name: entry.name,
                    resolved_path: entry.resolved_path,
                })
            }
        }
        deserializer.deserialize_any(Form)
    }
}

/// `tools.exec.applyPatch`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplyPatchConfig {
    /// Enable `apply_patch` for OpenAI models.
    pub enabled: Option<bool>,
    /// Models besides OpenAI's that may use `apply_patch` (`gpt-5` or `openai/gpt-5`).
    pub allow_models: Option<Vec<String>>,
    /// `apply_patch` stays inside the workspace even when `tools.fs.workspaceOnly` is off
    /// (OpenClaw's default: `true`).
    pub workspace_only: Option<bool>,
}
