//! Shared fixtures: temporary state directories and sample approvals.

use gatehouse_approvals::{ApprovalRequest, NewApproval, RunBinding, TurnSource};
use gatehouse_policy::exec::{ApprovalSummary, ProgramLine};
use gatehouse_policy::{Ask, Security};
use gatehouse_store::approvals_db::{SqliteApprovalStore, SqliteOptions};

pub(crate) fn open_db(dir: &tempfile::TempDir) -> SqliteApprovalStore {
    SqliteApprovalStore::open(
        dir.path().join("approvals.sqlite"),
        SqliteOptions::default(),
    )
    .unwrap()
}

pub(crate) fn request(command: &str) -> ApprovalRequest {
    ApprovalRequest {
        command: command.to_owned(),
        argv: command.split(' ').map(str::to_owned).collect(),
        cwd: Some("/work".to_owned()),
        env_keys: vec!["PATH".to_owned()],
        host: Some("gateway".to_owned()),
        agent_id: Some("main".to_owned()),
        session_key: Some("agent:main:main".to_owned()),
        resolved_path: Some("/usr/bin/ls".to_owned()),
        security: Some(Security::Allowlist),
        ask: Some(Ask::OnMiss),
        turn_source: Some(TurnSource {
            channel: Some("telegram".to_owned()),
            to: Some("-100123".to_owned()),
            account_id: None,
            thread_id: Some("42".to_owned()),
        }),
        binding: Some(RunBinding {
            hash: "ab".repeat(32),
            json: r#"{"argv":["ls"]}"#.to_owned(),
        }),
        requested_by: Some("agent-host".to_owned()),
        summary: Some(ApprovalSummary {
            programs: vec![ProgramLine {
                argv: command.split(' ').map(str::to_owned).collect(),
                resolved_path: Some("/usr/bin/ls".into()),
                looked_through: vec!["/usr/bin/nice".to_owned()],
                satisfied_by: None,
                reason: "no-allowlist-match: ls".to_owned(),
            }],
            env_names: vec!["PATH".to_owned()],
            allow_always_patterns: vec!["/usr/bin/ls".to_owned()],
        }),
        tool: None,
    }
}

pub(crate) fn new_approval(id: &str, created_at_ms: u64) -> NewApproval {
    NewApproval {
        id: id.to_owned(),
        request: request("ls -la"),
        created_at_ms,
        expires_at_ms: created_at_ms + 1_800_000,
    }
}
