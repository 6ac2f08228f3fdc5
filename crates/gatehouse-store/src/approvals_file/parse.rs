//! Parsing `exec-approvals.json` text into the model, with OpenClaw's load-time normalization.
//!
//! Normalization is what OpenClaw does on every load: legacy `agents.default` merges into
//! `agents.main`, bare-string allowlist entries become objects, blank ones are dropped and the
//! `commandText` copy is removed. Each change, and everything kept but not understood, is listed
//! in the [`LoadReport`] so `gatehouse check` can show it.

use std::fmt;
use std::path::Path;

use serde_json::{Map, Value};

use super::model::{AgentEntry, AllowlistItem, ExecApprovalsFile, PolicySettings, Setting};
use crate::error::StoreError;

/// The agent id OpenClaw uses when none is given, and the target of the legacy migration.
pub const DEFAULT_AGENT_ID: &str = "main";
/// The agent key whose settings and allowlist apply to every agent.
pub const WILDCARD_AGENT_ID: &str = "*";
/// The pre-`main` name of the default agent, migrated on load.
pub const LEGACY_DEFAULT_AGENT_ID: &str = "default";

/// A parsed file and what loading it changed or could not interpret.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The normalized model.
    pub file: ExecApprovalsFile,
    /// Notes for the operator; empty for a clean file.
    pub report: LoadReport,
}

/// What a load changed or kept without understanding. Nothing here is an error: the file still
/// loads, and anything not understood resolves to the strictest choice.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadReport {
    /// The notes, in the order they were found.
    pub notes: Vec<LoadNote>,
}

/// One thing the operator should know about a loaded file.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadNote {
    /// A field this version does not know; it is preserved on rewrite.
    UnknownField {
        /// Dotted path, e.g. `agents.main.colour`.
        path: String,
    },
    /// A setting that is not one of its documented values; resolved as the strictest value.
    InvalidSetting {
        /// Dotted path, e.g. `defaults.ask`.
        path: String,
        /// The value as written (JSON).
        value: String,
    },
    /// An allowlist element without a usable `pattern`; it never matches and is preserved.
    MalformedAllowlistEntry {
        /// The agent key.
        agent: String,
        /// Zero-based position in that agent's allowlist.
        index: usize,
    },
    /// A blank string in an allowlist was dropped.
    BlankAllowlistEntryDropped {
        /// The agent key.
        agent: String,
    },
    /// A `commandText` copy was removed from an entry (its `=command:` hash is what matches).
    CommandTextRemoved {
        /// The agent key.
        agent: String,
        /// The entry's pattern.
        pattern: String,
    },
    /// `agents.default` was merged into `agents.main` (main's settings win; allowlists merge).
    LegacyDefaultAgentMigrated,
    /// The file is readable by group or others; the next write restores 0600.
    LoosePermissions {
        /// The file's permission bits.
        mode: u32,
    },
}

impl fmt::Display for LoadNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadNote::UnknownField { path } => write!(f, "unknown field {path} (kept)"),
            LoadNote::InvalidSetting { path, value } => {
                write!(
                    f,
                    "invalid value {value} for {path} (treated as the strictest setting)"
                )
            }
            LoadNote::MalformedAllowlistEntry { agent, index } => write!(
                f,
                "agents.{agent}.allowlist[{index}] has no usable pattern (kept, never matches)"
            ),
            LoadNote::BlankAllowlistEntryDropped { agent } => {
                write!(f, "blank entry removed from agents.{agent}.allowlist")
            }
            LoadNote::CommandTextRemoved { agent, pattern } => write!(
                f,
                "commandText removed from agents.{agent}.allowlist entry {pattern}"
            ),
            LoadNote::LegacyDefaultAgentMigrated => {
                write!(f, "legacy agents.default merged into agents.main")
            }
            LoadNote::LoosePermissions { mode } => write!(
                f,
                "file mode {mode:o} lets other users read the socket token (expected 600)"
            ),
        }
    }
}

/// Parses and normalizes file text. `path` only labels errors.
///
/// Fails on invalid JSON or a wrong shape (with line and column) and on any `version` but 1:
/// OpenClaw would silently start from an empty file there, which a later write would turn into
/// data loss.
pub fn parse_str(text: &str, path: &Path) -> Result<Parsed, StoreError> {
    // `version` arrives in `extra`: deserializing the model directly (not flattened into a
    // wrapper) keeps serde_json's line and column for errors inside `agents`.
    let mut file: ExecApprovalsFile =
        serde_json::from_str(text).map_err(|err| StoreError::Parse {
            path: path.to_path_buf(),
            line: err.line(),
            column: err.column(),
            message: err.to_string(),
        })?;
    let version = file.extra.remove("version");
    match &version {
        Some(Value::Number(n)) if n.as_u64() == Some(1) => {}
        other => {
            return Err(StoreError::UnsupportedVersion {
                path: path.to_path_buf(),
                found: other
                    .as_ref()
                    .map_or_else(|| "missing".to_owned(), Value::to_string),
            });
        }
    }
    let mut report = LoadReport::default();
    migrate_legacy_default(&mut file, &mut report);
    normalize_allowlists(&mut file, &mut report);
    collect_unknown_and_invalid(&file, &mut report);
    Ok(Parsed { file, report })
}

fn migrate_legacy_default(file: &mut ExecApprovalsFile, report: &mut LoadReport) {
    let Some(legacy) = file.agents.remove(LEGACY_DEFAULT_AGENT_ID) else {
        return;
    };
    report.notes.push(LoadNote::LegacyDefaultAgentMigrated);
    let merged = match file.agents.remove(DEFAULT_AGENT_ID) {
        None => legacy,
        Some(main) => merge_agent(main, legacy),
    };
    file.agents.insert(DEFAULT_AGENT_ID.to_owned(), merged);
}

/// `main`'s settings win; the allowlists concatenate (main first) without duplicate rules.
fn merge_agent(main: AgentEntry, legacy: AgentEntry) -> AgentEntry {
    let mut allowlist: Vec<AllowlistItem> = Vec::new();
    for item in main
        .allowlist
        .into_iter()
        .flatten()
        .chain(legacy.allowlist.into_iter().flatten())
    {
        let duplicate = match &item {
            AllowlistItem::Entry(entry) => allowlist.iter().any(|kept| {
                kept.entry()
                    .is_some_and(|k| k.same_rule(&entry.pattern, entry.arg_pattern.as_deref()))
            }),
            AllowlistItem::Malformed(_) => false,
        };
        if !duplicate {
            allowlist.push(item);
        }
    }
    let mut extra = legacy.settings.extra;
    extra.extend(main.settings.extra);
    AgentEntry {
        allowlist: (!allowlist.is_empty()).then_some(allowlist),
        settings: PolicySettings {
            security: main.settings.security.or(legacy.settings.security),
            ask: main.settings.ask.or(legacy.settings.ask),
            ask_fallback: main.settings.ask_fallback.or(legacy.settings.ask_fallback),
            auto_allow_skills: main
                .settings
                .auto_allow_skills
                .or(legacy.settings.auto_allow_skills),
            extra,
        },
    }
}

fn normalize_allowlists(file: &mut ExecApprovalsFile, report: &mut LoadReport) {
    for (agent, entry) in &mut file.agents {
        let Some(items) = entry.allowlist.as_mut() else {
            continue;
        };
        items.retain(|item| {
            let blank =
                matches!(item, AllowlistItem::Malformed(Value::String(s)) if s.trim().is_empty());
            if blank {
                report.notes.push(LoadNote::BlankAllowlistEntryDropped {
                    agent: agent.clone(),
                });
            }
            !blank
        });
        for (index, item) in items.iter_mut().enumerate() {
            match item {
                AllowlistItem::Entry(entry) => {
                    if entry.extra.remove("commandText").is_some() {
                        report.notes.push(LoadNote::CommandTextRemoved {
                            agent: agent.clone(),
                            pattern: entry.pattern.clone(),
                        });
                    }
                }
                AllowlistItem::Malformed(_) => {
                    report.notes.push(LoadNote::MalformedAllowlistEntry {
                        agent: agent.clone(),
                        index,
                    });
                }
            }
        }
    }
}

fn collect_unknown_and_invalid(file: &ExecApprovalsFile, report: &mut LoadReport) {
    note_unknown(report, "", &file.extra);
    if let Some(socket) = &file.socket {
        note_unknown(report, "socket.", &socket.extra);
    }
    if let Some(defaults) = &file.defaults {
        note_settings(report, "defaults.", defaults);
    }
    for (agent, entry) in &file.agents {
        let prefix = format!("agents.{agent}.");
        note_settings(report, &prefix, &entry.settings);
        for (index, item) in entry.allowlist.iter().flatten().enumerate() {
            if let AllowlistItem::Entry(entry) = item {
                note_unknown(
                    report,
                    &format!("{prefix}allowlist[{index}]."),
                    &entry.extra,
                );
            }
        }
    }
}

fn note_settings(report: &mut LoadReport, prefix: &str, settings: &PolicySettings) {
    note_invalid(report, prefix, "security", settings.security.as_ref());
    note_invalid(report, prefix, "ask", settings.ask.as_ref());
    note_invalid(
        report,
        prefix,
        "askFallback",
        settings.ask_fallback.as_ref(),
    );
    note_invalid(
        report,
        prefix,
        "autoAllowSkills",
        settings.auto_allow_skills.as_ref(),
    );
    note_unknown(report, prefix, &settings.extra);
}

fn note_invalid<T>(
    report: &mut LoadReport,
    prefix: &str,
    field: &str,
    setting: Option<&Setting<T>>,
) {
    if let Some(Setting::Invalid(raw)) = setting {
        report.notes.push(LoadNote::InvalidSetting {
            path: format!("{prefix}{field}"),
            value: raw.to_string(),
        });
    }
}

fn note_unknown(report: &mut LoadReport, prefix: &str, extra: &Map<String, Value>) {
    for key in extra.keys() {
        report.notes.push(LoadNote::UnknownField {
            path: format!("{prefix}{key}"),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Parsed, StoreError> {
        parse_str(text, Path::new("exec-approvals.json"))
    }

    #[test]
    fn reports_line_and_column_of_syntax_errors() {
        let err = parse("{\n  \"version\": 1,\n  \"agents\": {,}\n}").unwrap_err();
        match err {
            StoreError::Parse { line, column, .. } => assert_eq!((line, column), (3, 14)),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn refuses_versions_other_than_one() {
        for text in [r#"{"agents":{}}"#, r#"{"version":2}"#, r#"{"version":"1"}"#] {
            assert!(matches!(
                parse(text),
                Err(StoreError::UnsupportedVersion { .. })
            ));
        }
    }

    #[test]
    fn keeps_and_reports_unknown_and_invalid_fields() {
        let parsed = parse(
            r#"{"version":1,"colour":"red","defaults":{"ask":"sometimes"},
                "agents":{"main":{"allowlist":[{"pattern":"/bin/ls","note":"x"}]}}}"#,
        )
        .unwrap();
        assert_eq!(
            parsed.report.notes,
            vec![
                LoadNote::UnknownField {
                    path: "colour".into()
                },
                LoadNote::InvalidSetting {
                    path: "defaults.ask".into(),
                    value: "\"sometimes\"".into()
                },
                LoadNote::UnknownField {
                    path: "agents.main.allowlist[0].note".into()
                },
            ]
        );
    }
}
