use gatehouse_approvals::{
    ApprovalRequest, ApprovalState, ConsumeOutcome, DeliveredMessage, ListFilter, ListOrder,
    NewApproval, Resolution, ResolveOutcome, Retention, mint_approval_id,
};
use gatehouse_policy::ApprovalDecision;
use gatehouse_store::StoreError;
use pretty_assertions::assert_eq;

use crate::support::{new_approval, open_db};

fn decided(decision: ApprovalDecision, by: &str) -> Resolution {
    Resolution::Decided {
        decision,
        resolved_by: Some(by.to_owned()),
        reason: None,
    }
}

#[test]
fn stores_the_whole_request_as_pending() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    let created = db.insert(&new_approval("a1", 1_000)).unwrap();
    assert_eq!(created.state, ApprovalState::Pending);
    assert_eq!(created.request, new_approval("a1", 1_000).request);
    assert_eq!(db.get("a1").unwrap(), Some(created));
    assert_eq!(db.get("missing").unwrap(), None);
    // The record `insert` returns is built, not read back; it must be the one a read returns,
    // for a bare request and an expiry past what the column holds too.
    let bare = NewApproval {
        id: "a2".to_owned(),
        request: ApprovalRequest {
            command: "true".to_owned(),
            ..ApprovalRequest::default()
        },
        created_at_ms: 5,
        expires_at_ms: u64::MAX,
    };
    let created = db.insert(&bare).unwrap();
    assert_eq!(db.get("a2").unwrap(), Some(created));
}

#[test]
fn moves_pending_to_each_terminal_state() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    let cases = [
        (
            decided(ApprovalDecision::AllowOnce, "alice"),
            ApprovalState::Allowed,
        ),
        (
            decided(ApprovalDecision::AllowAlways, "alice"),
            ApprovalState::Allowed,
        ),
        (
            decided(ApprovalDecision::Deny, "bob"),
            ApprovalState::Denied,
        ),
        (
            Resolution::Expired {
                reason: "timeout".into(),
            },
            ApprovalState::Expired,
        ),
        (
            Resolution::Cancelled {
                reason: "requester-gone".into(),
            },
            ApprovalState::Cancelled,
        ),
    ];
    for (i, (resolution, state)) in cases.into_iter().enumerate() {
        let id = format!("t{i}");
        db.insert(&new_approval(&id, 10)).unwrap();
        let outcome = db.resolve(&id, &resolution, 20).unwrap();
        assert!(outcome.applied(), "{id}");
        let record = outcome.winner();
        assert_eq!(record.state, state);
        assert_eq!(record.decision, resolution.decision());
        assert_eq!(record.resolved_at_ms, Some(20));
    }
}

#[test]
fn repeating_the_winning_answer_is_an_idempotent_success() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    db.insert(&new_approval("r1", 10)).unwrap();
    db.resolve("r1", &decided(ApprovalDecision::AllowOnce, "alice"), 20)
        .unwrap();
    let again = db
        .resolve("r1", &decided(ApprovalDecision::AllowOnce, "carol"), 30)
        .unwrap();
    match again {
        ResolveOutcome::Repeated(winner) => {
            assert_eq!(winner.resolved_by.as_deref(), Some("alice"));
            assert_eq!(winner.resolved_at_ms, Some(20));
        }
        other => panic!("expected Repeated, got {other:?}"),
    }
}

#[test]
fn keeps_the_reason_a_person_gave_with_their_decision() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    db.insert(&new_approval("r1", 10)).unwrap();
    let with_reason = Resolution::Decided {
        decision: ApprovalDecision::Deny,
        resolved_by: Some("bob".into()),
        reason: Some("not during the freeze".into()),
    };
    let outcome = db.resolve("r1", &with_reason, 20).unwrap();
    assert_eq!(
        outcome.winner().reason.as_deref(),
        Some("not during the freeze")
    );
    // The same answer again, without a reason, is a repeat and leaves the first one's reason.
    let repeated = db
        .resolve("r1", &decided(ApprovalDecision::Deny, "carol"), 30)
        .unwrap();
    assert!(matches!(repeated, ResolveOutcome::Repeated(_)));
    let stored = db.get("r1").unwrap().unwrap();
    assert_eq!(
        (stored.resolved_by.as_deref(), stored.reason.as_deref()),
        (Some("bob"), Some("not during the freeze"))
    );
}

#[test]
fn denies_a_different_later_answer_and_reports_the_winner() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    db.insert(&new_approval("d1", 10)).unwrap();
    db.resolve("d1", &decided(ApprovalDecision::Deny, "bob"), 20)
        .unwrap();
    for late in [
        decided(ApprovalDecision::AllowOnce, "alice"),
        Resolution::Expired {
            reason: "timeout".into(),
        },
        Resolution::Cancelled {
            reason: "gateway-restart".into(),
        },
    ] {
        let outcome = db.resolve("d1", &late, 30).unwrap();
        assert!(!outcome.applied());
        assert!(matches!(outcome, ResolveOutcome::Rejected { .. }));
        assert_eq!(outcome.winner().decision, Some(ApprovalDecision::Deny));
        assert_eq!(outcome.winner().state, ApprovalState::Denied);
    }
}

#[test]
fn refuses_unknown_and_duplicate_ids() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    db.insert(&new_approval("x", 10)).unwrap();
    db.resolve(
        "x",
        &Resolution::Expired {
            reason: "timeout".into(),
        },
        11,
    )
    .unwrap();
    assert!(matches!(
        db.insert(&new_approval("x", 12)),
        Err(StoreError::DuplicateId { .. })
    ));
    assert!(matches!(
        db.resolve("nope", &decided(ApprovalDecision::Deny, "bob"), 1),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        db.consume_allow_once("nope", 1),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn allow_once_is_consumed_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    db.insert(&new_approval("o1", 10)).unwrap();
    assert!(matches!(
        db.consume_allow_once("o1", 11).unwrap(),
        ConsumeOutcome::NotAllowOnce(_)
    ));
    db.resolve("o1", &decided(ApprovalDecision::AllowOnce, "alice"), 20)
        .unwrap();
    match db.consume_allow_once("o1", 21).unwrap() {
        ConsumeOutcome::Consumed(record) => assert_eq!(record.consumed_at_ms, Some(21)),
        other => panic!("expected Consumed, got {other:?}"),
    }
    match db.consume_allow_once("o1", 22).unwrap() {
        ConsumeOutcome::AlreadyConsumed(record) => assert_eq!(record.consumed_at_ms, Some(21)),
        other => panic!("expected AlreadyConsumed, got {other:?}"),
    }
}

#[test]
fn denies_consuming_anything_but_allow_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    for (id, resolution) in [
        ("always", decided(ApprovalDecision::AllowAlways, "alice")),
        ("deny", decided(ApprovalDecision::Deny, "bob")),
        (
            "expired",
            Resolution::Expired {
                reason: "timeout".into(),
            },
        ),
    ] {
        db.insert(&new_approval(id, 10)).unwrap();
        db.resolve(id, &resolution, 20).unwrap();
        assert!(
            matches!(
                db.consume_allow_once(id, 21).unwrap(),
                ConsumeOutcome::NotAllowOnce(_)
            ),
            "{id}"
        );
    }
}

/// Minted ids are indexed by the time they carry, and requester-chosen ids by their text; both
/// must be found, written, pruned and refused twice alike, side by side.
#[test]
fn minted_and_chosen_ids_are_found_written_and_refused_twice_alike() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    let minted = mint_approval_id(1_000).to_string();
    // A version 8 id whose last group does not say when it was created.
    let chosen = "0badc0de-0000-8000-8000-0000000003e7";
    for id in [minted.as_str(), chosen] {
        db.insert(&new_approval(id, 1_000)).unwrap();
        db.record_delivery(id, &message(id)).unwrap();
        db.resolve(id, &decided(ApprovalDecision::AllowOnce, "alice"), 1_001)
            .unwrap();
        assert!(matches!(
            db.consume_allow_once(id, 1_002).unwrap(),
            ConsumeOutcome::Consumed(_)
        ));
        let stored = db.get(id).unwrap().unwrap();
        assert_eq!((stored.id.as_str(), stored.messages.len()), (id, 1));
        assert!(matches!(
            db.insert(&new_approval(id, 1_003)),
            Err(StoreError::DuplicateId { .. })
        ));
        let found = db.find_by_prefix(&id[..8], 10).unwrap();
        assert_eq!(found.len(), 1, "{id}");
    }
    assert_eq!(
        db.prune_terminal_before(2_000, 10).unwrap(),
        [minted.as_str(), chosen]
    );
    assert_eq!(db.get(&minted).unwrap(), None);
}

fn message(message_id: &str) -> DeliveredMessage {
    DeliveredMessage {
        channel: "discord".into(),
        account_id: None,
        chat_id: "4000".into(),
        message_id: message_id.into(),
        thread_id: None,
    }
}

#[test]
fn records_delivered_messages_once_each_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    db.insert(&new_approval("m1", 10)).unwrap();
    db.record_delivery("m1", &message("6001")).unwrap();
    db.record_delivery("m1", &message("6000")).unwrap();
    db.record_delivery("m1", &message("6001")).unwrap();
    let record = db.get("m1").unwrap().unwrap();
    assert_eq!(record.messages, vec![message("6001"), message("6000")]);
    assert!(matches!(
        db.record_delivery("nope", &message("1")),
        Err(StoreError::NotFound { .. })
    ));
}

/// A decision and a consumed run report the row their update returned, not a second read; it
/// must be the record a read returns, delivered messages included.
#[test]
fn reports_a_decided_and_a_consumed_record_as_a_read_returns_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    db.insert(&new_approval("w1", 10)).unwrap();
    db.record_delivery("w1", &message("7001")).unwrap();
    let outcome = db
        .resolve("w1", &decided(ApprovalDecision::AllowOnce, "alice"), 20)
        .unwrap();
    assert!(outcome.applied());
    assert_eq!(Some(outcome.winner().clone()), db.get("w1").unwrap());
    match db.consume_allow_once("w1", 21).unwrap() {
        ConsumeOutcome::Consumed(record) => assert_eq!(Some(record), db.get("w1").unwrap()),
        other => panic!("expected Consumed, got {other:?}"),
    }
}

/// The approval manager loads these at start to keep every short id naming one approval.
#[test]
fn reports_the_short_id_of_every_stored_uuid() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    let ids = [
        "0f98895b-0000-4000-8000-000000000001",
        "0F98895B-0000-4000-8000-000000000002",
        "a1b2c3d4-0000-8000-8000-000000000003",
        "not-a-uuid",
    ];
    for (i, id) in ids.iter().enumerate() {
        db.insert(&new_approval(id, i as u64)).unwrap();
    }
    db.resolve(ids[0], &decided(ApprovalDecision::Deny, "bob"), 9)
        .unwrap();
    let mut shorts = db.short_ids().unwrap();
    shorts.sort_unstable();
    assert_eq!(shorts, [0x0f98_895b, 0x0f98_895b, 0xa1b2_c3d4]);
}

#[test]
fn finds_by_case_insensitive_prefix_treating_wildcards_literally() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    for (i, id) in ["abc123", "abd456", "ABx789", "a_c000"].iter().enumerate() {
        db.insert(&new_approval(id, i as u64)).unwrap();
    }
    let ids = |prefix: &str| -> Vec<String> {
        db.find_by_prefix(prefix, 10)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect()
    };
    assert_eq!(ids("AB"), vec!["abc123", "abd456", "ABx789"]);
    assert_eq!(ids("abc"), vec!["abc123"]);
    assert_eq!(ids("a_"), vec!["a_c000"]);
    assert_eq!(ids("a%"), Vec::<String>::new());
    assert_eq!(db.find_by_prefix("a", 2).unwrap().len(), 2);
}

#[test]
fn lists_with_state_agent_and_limit_filters() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    for i in 0..5u64 {
        let mut approval = new_approval(&format!("l{i}"), i);
        approval.request.agent_id = Some(if i % 2 == 0 { "main" } else { "ops" }.to_owned());
        db.insert(&approval).unwrap();
    }
    db.resolve("l0", &decided(ApprovalDecision::Deny, "bob"), 9)
        .unwrap();
    let ids = |filter: ListFilter| -> Vec<String> {
        db.list(&filter)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect()
    };
    assert_eq!(
        ids(ListFilter {
            state: Some(ApprovalState::Pending),
            ..ListFilter::default()
        }),
        vec!["l1", "l2", "l3", "l4"]
    );
    assert_eq!(
        ids(ListFilter {
            agent_id: Some("main".into()),
            ..ListFilter::default()
        }),
        vec!["l0", "l2", "l4"]
    );
    assert_eq!(
        ids(ListFilter {
            state: Some(ApprovalState::Pending),
            agent_id: Some("main".into()),
            limit: 1,
            ..ListFilter::default()
        }),
        vec!["l2"]
    );
    // Newest first, with a limit, is the latest of each listing: what a history view shows.
    let newest = |filter: ListFilter| {
        ids(ListFilter {
            order: ListOrder::NewestFirst,
            limit: 2,
            ..filter
        })
    };
    assert_eq!(newest(ListFilter::default()), vec!["l4", "l3"]);
    assert_eq!(
        newest(ListFilter {
            state: Some(ApprovalState::Denied),
            ..ListFilter::default()
        }),
        vec!["l0"]
    );
    assert_eq!(
        newest(ListFilter {
            agent_id: Some("ops".into()),
            ..ListFilter::default()
        }),
        vec!["l3", "l1"]
    );
    assert_eq!(
        ids(ListFilter {
            limit: 2,
            ..ListFilter::default()
        }),
        vec!["l0", "l1"]
    );
}

#[test]
fn a_listing_breaks_ties_in_creation_time_by_id_in_its_own_direction() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    for id in ["t-b", "t-a", "t-c"] {
        db.insert(&new_approval(id, 7)).unwrap();
    }
    let ids = |order| -> Vec<String> {
        let filter = ListFilter {
            order,
            ..ListFilter::default()
        };
        db.list(&filter)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect()
    };
    assert_eq!(ids(ListOrder::OldestFirst), vec!["t-a", "t-b", "t-c"]);
    assert_eq!(ids(ListOrder::NewestFirst), vec!["t-c", "t-b", "t-a"]);
}

#[test]
fn prunes_only_terminal_rows_older_than_the_retention() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    let day = 24 * 60 * 60 * 1000;
    let now = 100 * day;
    for id in ["old-denied", "new-denied", "old-pending"] {
        db.insert(&new_approval(id, day)).unwrap();
    }
    db.record_delivery("old-denied", &message("1")).unwrap();
    db.resolve(
        "old-denied",
        &decided(ApprovalDecision::Deny, "bob"),
        now - 31 * day,
    )
    .unwrap();
    db.resolve(
        "new-denied",
        &decided(ApprovalDecision::Deny, "bob"),
        now - 29 * day,
    )
    .unwrap();
    let cutoff = Retention::default().cutoff(now);
    assert_eq!(
        db.prune_terminal_before(cutoff, 100).unwrap(),
        ["old-denied"]
    );
    assert_eq!(db.get("old-denied").unwrap(), None);
    assert!(db.get("new-denied").unwrap().is_some());
    assert!(db.get("old-pending").unwrap().is_some());
    let short = Retention { history_ms: day };
    assert_eq!(
        db.prune_terminal_before(short.cutoff(now), 100).unwrap(),
        ["new-denied"]
    );
}

#[test]
fn prunes_in_chunks_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    for (id, resolved_at_ms) in [("third", 30), ("first", 10), ("kept", 50), ("second", 20)] {
        db.insert(&new_approval(id, 1)).unwrap();
        db.resolve(id, &decided(ApprovalDecision::Deny, "bob"), resolved_at_ms)
            .unwrap();
    }
    assert_eq!(
        db.prune_terminal_before(40, 2).unwrap(),
        ["first", "second"]
    );
    let left: Vec<String> = db
        .list(&ListFilter::default())
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(left, ["kept", "third"]);
    assert_eq!(
        db.prune_terminal_before(40, 2).unwrap(),
        ["third"],
        "the last one"
    );
    assert_eq!(
        db.prune_terminal_before(40, 2).unwrap(),
        Vec::<String>::new()
    );
}

fn tool_approval(id: &str, agent: &str) -> NewApproval {
    use gatehouse_approvals::{Severity, ToolRequest};
    use gatehouse_policy::tool_call::{Grant, GrantScope};
    NewApproval {
        id: id.to_owned(),
        request: ApprovalRequest {
            command: "web_fetch https://example.com/a".to_owned(),
            agent_id: Some(agent.to_owned()),
            tool: Some(ToolRequest {
                tool: "web_fetch".to_owned(),
                call_id: None,
                params: vec![("url".to_owned(), "https://example.com/a".to_owned())],
                title: None,
                description: Some("line 1\nline 2".to_owned()),
                severity: Severity::Critical,
                reasons: Vec::new(),
                grant: Some(Grant {
                    tool: "web_fetch".to_owned(),
                    scope: GrantScope::Hosts(["example.com".to_owned()].into()),
                }),
            }),
            ..ApprovalRequest::default()
        },
        created_at_ms: 1_000,
        expires_at_ms: 2_000,
    }
}

#[test]
fn an_allow_always_of_a_tool_approval_stores_its_grant_with_the_decision() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    let created = db.insert(&tool_approval("t1", "main")).unwrap();
    assert_eq!(db.get("t1").unwrap(), Some(created.clone()));
    assert!(db.grants().unwrap().is_empty());

    let outcome = db
        .resolve(
            "t1",
            &decided(ApprovalDecision::AllowAlways, "alice"),
            1_500,
        )
        .unwrap();
    assert!(outcome.applied());
    let grants = db.grants().unwrap();
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].id, "t1");
    assert_eq!(grants[0].agent_id, "main");
    assert_eq!(grants[0].created_at_ms, 1_500);
    assert_eq!(grants[0].granted_by.as_deref(), Some("alice"));
    assert_eq!(
        Some(&grants[0].grant),
        created.request.tool.unwrap().grant.as_ref()
    );

    // A losing answer stores nothing more; pruning the approval keeps the grant.
    db.resolve("t1", &decided(ApprovalDecision::AllowAlways, "bob"), 1_600)
        .unwrap();
    assert_eq!(db.grants().unwrap().len(), 1);
    db.prune_terminal_before(u64::MAX / 2, 100).unwrap();
    assert_eq!(db.get("t1").unwrap(), None);
    assert_eq!(db.grants().unwrap().len(), 1);

    assert_eq!(
        db.revoke_grant("t1").unwrap().map(|g| g.id),
        Some("t1".to_owned())
    );
    assert_eq!(db.revoke_grant("t1").unwrap(), None);
    assert!(db.grants().unwrap().is_empty());
}
