//! The `exec-approvals.json` data model, field for field as OpenClaw writes it.
//!
//! Two rules shape every type here. Unknown fields are kept (`extra`) so a rewrite never loses
//! what an operator or a newer version wrote; and a value that does not parse is kept verbatim
//! ([`Setting::Invalid`], [`AllowlistItem::Malformed`]) so it is reported and written back
//! unchanged, while resolution treats it as the strictest choice.

use std::collections::BTreeMap;

use gatehouse_policy::{Ask, Security};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::token::SocketToken;

/// The whole file, minus `version` (always 1; checked when parsing, written when saving).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExecApprovalsFile {
    /// Where the approvals socket listens and the token that guards it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<SocketConfig>,
    /// Host-wide settings for agents that do not set their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<PolicySettings>,
    /// Per-agent settings and allowlists; the key `*` applies to every agent. `null` reads as
    /// empty, as in OpenClaw.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub agents: BTreeMap<String, AgentEntry>,
    /// Top-level fields this version does not know, preserved on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `socket`: the local socket approval clients connect to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SocketConfig {
    /// Socket path; `~` is expanded by the server that binds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Shared secret; generated when missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<SocketToken>,
    /// Unknown fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `defaults` and the policy half of an agent entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PolicySettings {
    /// `deny | allowlist | full`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<Setting<Security>>,
    /// `off | on-miss | always`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask: Option<Setting<Ask>>,
    /// The security level applied when an approval times out.
    #[serde(
        rename = "askFallback",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub ask_fallback: Option<Setting<Security>>,
    /// Whether binaries of installed skills are trusted without an allowlist entry.
    #[serde(
        rename = "autoAllowSkills",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub auto_allow_skills: Option<Setting<bool>>,
    /// Unknown fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `agents.<id>`: an agent's own settings plus its allowlist.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentEntry {
    /// `security`, `ask`, `askFallback`, `autoAllowSkills` and unknown fields.
    #[serde(flatten)]
    pub settings: PolicySettings,
    /// The allowlist, in file order. Absent and empty are kept distinct on rewrite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowlist: Option<Vec<AllowlistItem>>,
}

fn null_as_empty<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, AgentEntry>, D::Error> {
    Ok(Option::deserialize(deserializer)?.unwrap_or_default())
}

/// One allowlist element as written: a usable entry, or something kept only to be written back.
#[derive(Debug, Clone, PartialEq)]
pub enum AllowlistItem {
    /// An entry with a non-blank `pattern` (a bare string `"ls"` is read as `{ "pattern": "ls" }`).
    Entry(AllowlistEntry),
    /// Anything else (`{}`, `{ "pattern": 123 }`, a number). Never matches; reported on load.
    Malformed(Value),
}

/// A usable allowlist entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AllowlistEntry {
    /// Stable UUID, assigned on first write when missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Resolved-path glob (or `=command:<hash>` for an exact-command approval).
    pub pattern: String,
    /// Optional regular expression the arguments must match.
    #[serde(
        rename = "argPattern",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub arg_pattern: Option<String>,
    /// `allow-always` when a person's decision created the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// When the entry last let a command run (ms since the Unix epoch).
    #[serde(
        rename = "lastUsedAt",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub last_used_at: Option<u64>,
    /// The command text of that run.
    #[serde(
        rename = "lastUsedCommand",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub last_used_command: Option<String>,
    /// The executable path that run resolved to.
    #[serde(
        rename = "lastResolvedPath",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub last_resolved_path: Option<String>,
    /// Unknown fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl AllowlistEntry {
    /// An entry with only a pattern, as an allow-always decision or an operator adds it.
    pub fn new(pattern: impl Into<String>) -> Self {
        AllowlistEntry {
            pattern: pattern.into(),
            ..AllowlistEntry::default()
        }
    }

    /// True when `other` names the same rule: same pattern (trimmed, ASCII case-insensitive, as
    /// OpenClaw compares) and same `argPattern`.
    pub fn same_rule(&self, pattern: &str, arg_pattern: Option<&str>) -> bool {
        self.pattern.trim().eq_ignore_ascii_case(pattern.trim())
            && normalized_arg(self.arg_pattern.as_deref()) == normalized_arg(arg_pattern)
    }
}

fn normalized_arg(arg: Option<&str>) -> &str {
    arg.map(str::trim).unwrap_or("")
}

impl AllowlistItem {
    /// The entry, when this item is usable.
    pub fn entry(&self) -> Option<&AllowlistEntry> {
        match self {
            AllowlistItem::Entry(entry) => Some(entry),
            AllowlistItem::Malformed(_) => None,
        }
    }
}

impl Serialize for AllowlistItem {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            AllowlistItem::Entry(entry) => entry.serialize(serializer),
            AllowlistItem::Malformed(value) => value.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for AllowlistItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(AllowlistItem::from_value(value))
    }
}

impl AllowlistItem {
    fn from_value(value: Value) -> Self {
        match &value {
            Value::String(pattern) if !pattern.trim().is_empty() => {
                AllowlistItem::Entry(AllowlistEntry::new(pattern.trim()))
            }
            Value::Object(fields) => match fields.get("pattern") {
                Some(Value::String(pattern)) if !pattern.trim().is_empty() => {
                    match serde_json::from_value::<AllowlistEntry>(value.clone()) {
                        Ok(entry) => AllowlistItem::Entry(entry),
                        Err(_) => AllowlistItem::Malformed(value),
                    }
                }
                _ => AllowlistItem::Malformed(value),
            },
            _ => AllowlistItem::Malformed(value),
        }
    }
}

/// A setting as written: parsed when it is one of the documented values, verbatim otherwise.
#[derive(Debug, Clone, PartialEq)]
pub enum Setting<T> {
    /// A documented value.
    Valid(T),
    /// Anything else; resolution treats it as the strictest choice and the load report names it.
    Invalid(Value),
}

/// The values a [`Setting`] can hold, with their JSON spelling.
pub trait SettingValue: Copy {
    /// Parses the JSON value; `None` when it is not a documented value.
    fn from_json(value: &Value) -> Option<Self>;
    /// The JSON spelling.
    fn to_json(self) -> Value;
}

impl SettingValue for Security {
    fn from_json(value: &Value) -> Option<Self> {
        value.as_str().and_then(|s| s.trim().parse().ok())
    }
    fn to_json(self) -> Value {
        Value::String(self.as_str().to_owned())
    }
}

impl SettingValue for Ask {
    fn from_json(value: &Value) -> Option<Self> {
        value.as_str().and_then(|s| s.trim().parse().ok())
    }
    fn to_json(self) -> Value {
        Value::String(self.as_str().to_owned())
    }
}

impl SettingValue for bool {
    fn from_json(value: &Value) -> Option<Self> {
        value.as_bool()
    }
    fn to_json(self) -> Value {
        Value::Bool(self)
    }
}

impl<T: SettingValue> Setting<T> {
    /// The value when valid.
    pub fn valid(&self) -> Option<T> {
        match self {
            Setting::Valid(value) => Some(*value),
            Setting::Invalid(_) => None,
        }
    }
}

impl<T: SettingValue> Serialize for Setting<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Setting::Valid(value) => value.to_json().serialize(serializer),
            Setting::Invalid(raw) => raw.serialize(serializer),
        }
    }
}

impl<'de, T: SettingValue> Deserialize<'de> for Setting<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Value::deserialize(deserializer)?;
        Ok(match T::from_json(&raw) {
            Some(value) => Setting::Valid(value),
            None => Setting::Invalid(raw),
        })
    }
}
