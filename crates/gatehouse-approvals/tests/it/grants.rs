//! Tool approvals and their allow-always grants: offered only with a grant, stored with the
//! decision, known before the requester wakes, kept across a restart, revoked for good.

use std::path::PathBuf;

use gatehouse_approvals::{
    ApprovalError, ApprovalRequest, CreateApproval, ManagerConfig, Severity, ToolRequest,
};
use gatehouse_policy::ApprovalDecision;
use gatehouse_policy::tool_call::{Grant, GrantScope};

use crate::support::{open, sqlite, start};

fn write_grant(path: &str) -> Grant {
    Grant {
        tool: "write".to_owned(),
        scope: GrantScope::Paths([PathBuf::from(path)].into()),
    }
}

fn tool_call(agent: Option<&str>, grant: Option<Grant>) -> CreateApproval {
    CreateApproval {
        id: None,
        request: ApprovalRequest {
            command: "write /ws/notes.md".to_owned(),
            agent_id: agent.map(str::to_owned),
            tool: Some(ToolRequest {
                tool: "write".to_owned(),
                call_id: Some("toolu_1".to_owned()),
                params: vec![("path".to_owned(), "/ws/notes.md".to_owned())],
                title: Some("Write notes".to_owned()),
                description: None,
                severity: Severity::Warning,
                reasons: vec!["always-ask".to_owned()],
                grant,
            }),
            ..ApprovalRequest::default()
        },
        timeout: None,
        allow_always_patterns: Vec::new(),
    }
}

#[tokio::test]
async fn offers_allow_always_for_a_tool_call_only_with_a_grant_and_an_agent() {
    let h = start().await;
    let with = h
        .manager
        .create(tool_call(Some("main"), Some(write_grant("/ws/notes.md"))))
        .await
        .unwrap();
    assert!(with.offered.allow_always);
    let without_grant = h
        .manager
        .create(tool_call(Some("main"), None))
        .await
        .unwrap();
    assert!(!without_grant.offered.allow_always);
    let without_agent = h
        .manager
        .create(tool_call(None, Some(write_grant("/ws/notes.md"))))
        .await
        .unwrap();
    assert!(!without_agent.offered.allow_always);
    let refused = h
        .answer(&without_grant.id.to_string(), ApprovalDecision::AllowAlways)
        .await
        .unwrap_err();
    assert!(
        matches!(refused, ApprovalError::DecisionNotOffered { .. }),
        "{refused}"
    );
}

#[tokio::test]
async fn an_allow_always_grant_is_known_when_the_waiter_wakes_and_survives_a_restart() {
    let h = start().await;
    let (created, decision) = h
        .manager
        .create_awaited(tool_call(Some("main"), Some(write_grant("/ws/notes.md"))))
        .await
        .unwrap();
    let manager = h.manager.clone();
    let waiter = tokio::spawn(async move {
        let record = decision.decided().await.unwrap();
        // Read the moment the requester hears the decision: its next call must be covered.
        (record, manager.grants_for("main"))
    });
    h.decide(created.id, ApprovalDecision::AllowAlways).await;
    let (record, grants) = waiter.await.unwrap();
    assert_eq!(record.decision, Some(ApprovalDecision::AllowAlways));
    assert_eq!(&*grants, &[write_grant("/ws/notes.md")]);
    assert!(h.manager.grants_for("work").is_empty());

    let listed = h.manager.grants(Some("main"));
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, created.id.to_string());
    assert_eq!(listed[0].granted_by.as_deref(), Some("alice"));

    let dir = h.dir;
    drop(h.manager);
    drop(h.events);
    let (manager, _events) = open(dir.path(), ManagerConfig::default()).await;
    assert_eq!(&*manager.grants_for("main"), &[write_grant("/ws/notes.md")]);
    assert_eq!(manager.grants(None), listed);
}

#[tokio::test]
async fn allow_once_and_deny_store_no_grant() {
    let h = start().await;
    for decision in [ApprovalDecision::AllowOnce, ApprovalDecision::Deny] {
        let created = h
            .manager
            .create(tool_call(Some("main"), Some(write_grant("/ws/a"))))
            .await
            .unwrap();
        h.decide(created.id, decision).await;
    }
    assert!(h.manager.grants(None).is_empty());
    assert!(sqlite(h.dir.path()).grants().unwrap().is_empty());
}

#[tokio::test]
async fn a_revoked_grant_is_gone_from_memory_and_store_and_cannot_be_revoked_twice() {
    let h = start().await;
    let mut ids = Vec::new();
    for path in ["/ws/a", "/ws/b"] {
        let created = h
            .manager
            .create(tool_call(Some("main"), Some(write_grant(path))))
            .await
            .unwrap();
        h.decide(created.id, ApprovalDecision::AllowAlways).await;
        ids.push(created.id.to_string());
    }
    assert_eq!(h.manager.grants_for("main").len(), 2);
    let unknown = h.manager.revoke_grant("ffffffff-0000").await.unwrap_err();
    assert!(
        matches!(unknown, ApprovalError::UnknownGrant { .. }),
        "{unknown}"
    );
    let empty = h.manager.revoke_grant("  ").await.unwrap_err();
    assert!(
        matches!(empty, ApprovalError::UnknownGrant { .. }),
        "{empty}"
    );

    let revoked = h.manager.revoke_grant(&ids[0][..13]).await.unwrap();
    assert_eq!(revoked.id, ids[0]);
    assert_eq!(revoked.grant, write_grant("/ws/a"));
    assert_eq!(&*h.manager.grants_for("main"), &[write_grant("/ws/b")]);
    let stored = sqlite(h.dir.path()).grants().unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].id, ids[1]);
    let again = h.manager.revoke_grant(&ids[0]).await.unwrap_err();
    assert!(
        matches!(again, ApprovalError::UnknownGrant { .. }),
        "{again}"
    );
}
