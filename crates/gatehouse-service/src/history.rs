//! The history operators search: settled approvals, newest first, narrowed by outcome, agent,
//! tool, who decided and free text, one page at a time.
//!
//! The store answers by state and agent only, from one end of the history; the other filters
//! are applied here over the newest [`HISTORY_WINDOW`] settled approvals of that state and
//! agent, and the page says whether the window held the whole history (`complete`), so an
//! operator knows when an older match may lie beyond it.

use std::str::FromStr;

use gatehouse_approvals::{ApprovalRecord, ApprovalState, ListFilter, ListOrder};
use gatehouse_policy::ApprovalDecision;

use crate::approvals::ApprovalView;
use crate::error::ServiceError;
use crate::pipeline::invalid;
use crate::service::Service;

/// How many of the newest approvals a search reads: enough for months of a busy operator's
/// history, small enough to filter in memory on each page.
pub const HISTORY_WINDOW: usize = 5_000;

/// The most approvals one page holds.
pub const MAX_HISTORY_PAGE: usize = 200;

/// How an approval ended, as the history filter names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Allowed for this run only.
    AllowedOnce,
    /// Allowed, and the allowlist (or a grant) extended.
    AllowedAlways,
    /// Denied by a person.
    Denied,
    /// Nobody answered in time, or nobody could be asked.
    Expired,
    /// Withdrawn by the requester or a restart.
    Cancelled,
}

impl Outcome {
    fn state(self) -> ApprovalState {
        match self {
            Outcome::AllowedOnce | Outcome::AllowedAlways => ApprovalState::Allowed,
            Outcome::Denied => ApprovalState::Denied,
            Outcome::Expired => ApprovalState::Expired,
            Outcome::Cancelled => ApprovalState::Cancelled,
        }
    }

    fn matches(self, record: &ApprovalRecord) -> bool {
        match self {
            Outcome::AllowedOnce => record.decision == Some(ApprovalDecision::AllowOnce),
            Outcome::AllowedAlways => record.decision == Some(ApprovalDecision::AllowAlways),
            Outcome::Denied | Outcome::Expired | Outcome::Cancelled => true,
        }
    }
}

impl FromStr for Outcome {
    type Err = ServiceError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(match text {
            "allowed-once" => Outcome::AllowedOnce,
            "allowed-always" => Outcome::AllowedAlways,
            "denied" => Outcome::Denied,
            "expired" => Outcome::Expired,
            "cancelled" => Outcome::Cancelled,
            other => {
                return Err(invalid(format!(
                    "unknown outcome {other:?}; expected allowed-once, allowed-always, denied, \
                     expired or cancelled"
                )));
            }
        })
    }
}

/// What to look for; every filter given must match.
#[derive(Debug, Clone, Default)]
pub struct HistoryQuery {
    /// Words that must all appear (case-insensitively) in the command, working directory,
    /// resolved path, agent, session, tool, who decided, reason or id.
    pub text: Option<String>,
    /// Only this agent.
    pub agent_id: Option<String>,
    /// Only this outcome.
    pub outcome: Option<Outcome>,
    /// Only calls of this tool (`exec` for commands).
    pub tool: Option<String>,
    /// Only approvals decided by a name containing this (case-insensitively).
    pub resolved_by: Option<String>,
    /// Matches to skip, newest first.
    pub offset: usize,
    /// Matches to return (at most [`MAX_HISTORY_PAGE`]).
    pub limit: usize,
}

/// One page of matches.
#[derive(Debug, Clone)]
pub struct HistoryPage {
    /// The matches on this page, newest first.
    pub approvals: Vec<ApprovalView>,
    /// Matches in the window, on every page.
    pub total: usize,
    /// Whether the window held every settled approval of the state and agent asked for.
    pub complete: bool,
}

impl Service {
    /// `exec.approval.history`: settled approvals matching `query`, newest first, one page.
    pub async fn history(&self, query: HistoryQuery) -> Result<HistoryPage, ServiceError> {
        let filter = ListFilter {
            state: query.outcome.map(Outcome::state),
            agent_id: query.agent_id.clone().filter(|agent| !agent.is_empty()),
            limit: HISTORY_WINDOW,
            order: ListOrder::NewestFirst,
        };
        let records = self.core().manager.list(filter).await?;
        let complete = records.len() < HISTORY_WINDOW;
        let matcher = Matcher::new(&query);
        let matches: Vec<ApprovalRecord> = records
            .into_iter()
            .filter(|record| record.state != ApprovalState::Pending && matcher.matches(record))
            .collect();
        let total = matches.len();
        let approvals = matches
            .into_iter()
            .skip(query.offset)
            .take(query.limit.min(MAX_HISTORY_PAGE))
            .map(|record| self.view(record))
            .collect();
        Ok(HistoryPage {
            approvals,
            total,
            complete,
        })
    }
}

/// The filters the store cannot apply, lower-cased once.
struct Matcher {
    words: Vec<String>,
    outcome: Option<Outcome>,
    tool: Option<String>,
    resolved_by: Option<String>,
}

impl Matcher {
    fn new(query: &HistoryQuery) -> Self {
        let lower = |text: &Option<String>| {
            text.as_deref()
                .map(str::trim)
                .filter(|text| !text.is_empty())
                .map(str::to_lowercase)
        };
        Matcher {
            words: query
                .text
                .as_deref()
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_lowercase)
                .collect(),
            outcome: query.outcome,
            tool: lower(&query.tool),
            resolved_by: lower(&query.resolved_by),
        }
    }

    fn matches(&self, record: &ApprovalRecord) -> bool {
        let tool = tool_name(record);
        if self.outcome.is_some_and(|outcome| !outcome.matches(record))
            || self
                .tool
                .as_ref()
                .is_some_and(|wanted| *wanted != tool.to_lowercase())
        {
            return false;
        }
        if let Some(wanted) = &self.resolved_by {
            let by = record.resolved_by.as_deref().unwrap_or_default();
            if !by.to_lowercase().contains(wanted.as_str()) {
                return false;
            }
        }
        if self.words.is_empty() {
            return true;
        }
        let haystack = searchable_text(record, tool);
        self.words
            .iter()
            .all(|word| haystack.contains(word.as_str()))
    }
}

/// The tool an approval is about: its tool call's, or `exec` for a command.
fn tool_name(record: &ApprovalRecord) -> &str {
    record
        .request
        .tool
        .as_ref()
        .map_or("exec", |tool| tool.tool.as_str())
}

/// Everything free text is searched in, lower-cased, one field per line.
fn searchable_text(record: &ApprovalRecord, tool: &str) -> String {
    let request = &record.request;
    let mut fields: Vec<&str> = vec![&record.id, &request.command, tool];
    fields.extend(
        [
            &request.cwd,
            &request.agent_id,
            &request.session_key,
            &request.resolved_path,
            &record.resolved_by,
            &record.reason,
        ]
        .into_iter()
        .flatten()
        .map(String::as_str),
    );
    if let Some(call) = &request.tool {
        fields.extend(call.params.iter().map(|(_, value)| value.as_str()));
        fields.extend(call.title.as_deref());
    }
    fields.join("\n").to_lowercase()
}

#[cfg(test)]
mod tests {
    use gatehouse_approvals::{ApprovalRequest, Severity, ToolRequest};

    use super::*;

    fn settled(command: &str, decision: ApprovalDecision, by: &str) -> ApprovalRecord {
        ApprovalRecord {
            id: "0c5a7d26-2d7b-4f5a-9d04-01a227264103".into(),
            request: ApprovalRequest {
                command: command.into(),
                cwd: Some("/srv/App".into()),
                agent_id: Some("main".into()),
                ..ApprovalRequest::default()
            },
            state: if decision == ApprovalDecision::Deny {
                ApprovalState::Denied
            } else {
                ApprovalState::Allowed
            },
            decision: Some(decision),
            resolved_by: Some(by.into()),
            reason: None,
            created_at_ms: 1,
            expires_at_ms: 2,
            resolved_at_ms: Some(2),
            consumed_at_ms: None,
            messages: Vec::new(),
        }
    }

    fn matches(query: HistoryQuery, record: &ApprovalRecord) -> bool {
        Matcher::new(&query).matches(record)
    }

    #[test]
    fn every_word_must_appear_in_some_field_ignoring_case() {
        let record = settled("make deploy", ApprovalDecision::AllowOnce, "Alice");
        let text = |text: &str| HistoryQuery {
            text: Some(text.into()),
            ..HistoryQuery::default()
        };
        assert!(matches(text("DEPLOY /srv/app"), &record));
        assert!(matches(text("alice 0c5a7d26"), &record));
        assert!(!matches(text("deploy staging"), &record));
        assert!(matches(text("   "), &record));
    }

    #[test]
    fn tells_allow_once_from_allow_always_and_names_commands_exec() {
        let once = settled("ls", ApprovalDecision::AllowOnce, "admin");
        let always = settled("ls", ApprovalDecision::AllowAlways, "admin");
        let outcome = |outcome| HistoryQuery {
            outcome: Some(outcome),
            ..HistoryQuery::default()
        };
        assert!(matches(outcome(Outcome::AllowedOnce), &once));
        assert!(!matches(outcome(Outcome::AllowedOnce), &always));
        assert!(matches(outcome(Outcome::AllowedAlways), &always));
        let tool = |tool: &str| HistoryQuery {
            tool: Some(tool.into()),
            ..HistoryQuery::default()
        };
        assert!(matches(tool("EXEC"), &once));
        let mut call = once.clone();
        call.request.tool = Some(ToolRequest {
            tool: "write".into(),
            call_id: None,
            params: vec![("path".into(), "notes.md".into())],
            title: None,
            description: None,
            severity: Severity::default(),
            reasons: Vec::new(),
            grant: None,
        });
        assert!(matches(tool("write"), &call));
        assert!(!matches(tool("exec"), &call));
        assert!(!matches(tool("writ"), &call), "a tool is named exactly");
        let text = HistoryQuery {
            text: Some("write NOTES.md".into()),
            ..HistoryQuery::default()
        };
        assert!(
            matches(text, &call),
            "the tool and its parameters are searched"
        );
    }

    #[test]
    fn who_decided_matches_part_of_the_name_and_nobody_matches_no_name() {
        let record = settled("ls", ApprovalDecision::Deny, "telegram:Alice");
        let by = |name: &str| HistoryQuery {
            resolved_by: Some(name.into()),
            ..HistoryQuery::default()
        };
        assert!(matches(by("alice"), &record));
        assert!(!matches(by("bob"), &record));
        let mut expired = record.clone();
        expired.resolved_by = None;
        assert!(!matches(by("alice"), &expired));
        assert!(matches(by(""), &expired), "an empty filter is no filter");
    }

    #[test]
    fn names_every_outcome_and_refuses_others() {
        for (text, outcome) in [
            ("allowed-once", Outcome::AllowedOnce),
            ("allowed-always", Outcome::AllowedAlways),
            ("denied", Outcome::Denied),
            ("expired", Outcome::Expired),
            ("cancelled", Outcome::Cancelled),
        ] {
            assert_eq!(text.parse::<Outcome>().ok(), Some(outcome));
        }
        assert!("allowed".parse::<Outcome>().is_err());
    }
}
