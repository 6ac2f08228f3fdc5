//! The chat outbox on SQLite and PostgreSQL (see `stores`): each step applies only from the
//! state it starts in, attempts are fenced, a delivered message is kept with its approval (an
//! origin notice is not), messages go with pruned history; and an upgraded SQLite database
//! carries the copies of pending approvals over.

use gatehouse_approvals::{
    ChatOutbox, DeliveredMessage, OutboxMessage, OutboxRoute, OutboxState, OutboxStep, Resolution,
    StepOutcome,
};
use pretty_assertions::assert_eq;
use rusqlite::Connection;

use crate::stores::{Db, on_both_stores};
use crate::support::{new_approval, open_db};

fn message(key: &str, approval_id: Option<&str>, kind: &str) -> OutboxMessage {
    OutboxMessage {
        key: key.to_owned(),
        approval_id: approval_id.map(str::to_owned),
        kind: kind.to_owned(),
        route: OutboxRoute {
            channel: "telegram".to_owned(),
            account_id: None,
            direct: true,
            target: "4242".to_owned(),
            thread_id: None,
        },
    }
}

fn landed(message_id: &str) -> DeliveredMessage {
    DeliveredMessage {
        channel: "telegram".to_owned(),
        account_id: None,
        chat_id: "4242".to_owned(),
        message_id: message_id.to_owned(),
        thread_id: None,
    }
}

fn sending(attempt: u32, claimant: &str, lease_until_ms: u64) -> OutboxStep {
    OutboxStep::Sending {
        attempt,
        claimant: claimant.to_owned(),
        lease_until_ms,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn applies_each_step_only_from_the_state_it_starts_in_and_fences_attempts(db: &Db) {
    db.insert(&new_approval("a1", 1_000)).unwrap();
    db.block_on(async {
        let step = |key: &str, step| db.outbox().record_step(key.to_owned(), step, 2_000);
        db.outbox()
            .plan_messages(vec![message("k1", Some("a1"), "card")], 1_500)
            .await
            .unwrap();
        // Planned twice: the second is ignored, the message keeps its place.
        db.outbox()
            .plan_messages(vec![message("k1", Some("a1"), "card")], 1_600)
            .await
            .unwrap();
        assert_eq!(
            step("k1", OutboxStep::Finished).await.unwrap(),
            StepOutcome::Refused
        );
        assert_eq!(
            step("k1", sending(2, "gw-a", 9_000)).await.unwrap(),
            StepOutcome::Refused
        );
        assert_eq!(
            step("k1", sending(1, "gw-a", 9_000)).await.unwrap(),
            StepOutcome::Applied
        );
        // Another gateway cannot take an attempt whose lease still runs.
        let taken = db
            .outbox()
            .record_step("k1".into(), sending(2, "gw-b", 20_000), 5_000);
        assert_eq!(taken.await.unwrap(), StepOutcome::Refused);
        // Once it ran out, it can; the first gateway's late answer is then refused.
        let taken = db
            .outbox()
            .record_step("k1".into(), sending(2, "gw-b", 20_000), 10_000);
        assert_eq!(taken.await.unwrap(), StepOutcome::Applied);
        let late = OutboxStep::Delivered {
            attempt: 1,
            message: landed("7"),
        };
        assert_eq!(step("k1", late).await.unwrap(), StepOutcome::Refused);
        let failed = OutboxStep::SendFailed {
            attempt: 2,
            error: "telegram call failed, may succeed later: 502".into(),
            retry_at_ms: 3_000,
        };
        assert_eq!(step("k1", failed).await.unwrap(), StepOutcome::Applied);
        let troubled = db.outbox().troubled_messages(0, 10).await.unwrap();
        assert_eq!(troubled.len(), 1);
        assert_eq!(troubled[0].state, OutboxState::Queued);
        assert_eq!(troubled[0].attempts, 2);
        assert_eq!(troubled[0].retry_at_ms, Some(3_000));
        assert!(troubled[0].last_error.as_deref().unwrap().contains("502"));
        assert_eq!(
            step("k1", sending(3, "gw-b", 30_000)).await.unwrap(),
            StepOutcome::Applied
        );
        let delivered = OutboxStep::Delivered {
            attempt: 3,
            message: landed("8"),
        };
        assert_eq!(step("k1", delivered).await.unwrap(), StepOutcome::Applied);
        assert!(
            db.outbox()
                .troubled_messages(0, 10)
                .await
                .unwrap()
                .is_empty(),
            "a success clears it"
        );
        let open = db.outbox().open_messages().await.unwrap();
        assert_eq!(open[0].state, OutboxState::Delivered);
        assert_eq!(open[0].delivered, Some(landed("8")));
        assert_eq!(open[0].claim, None);
        let failed = OutboxStep::FinishFailed {
            error: "message can't be edited".into(),
            retry_at_ms: 4_000,
        };
        assert_eq!(step("k1", failed).await.unwrap(), StepOutcome::Applied);
        assert_eq!(
            db.outbox().troubled_messages(0, 10).await.unwrap()[0].state,
            OutboxState::Delivered
        );
        assert_eq!(
            step("k1", OutboxStep::Finished).await.unwrap(),
            StepOutcome::Applied
        );
        assert!(db.outbox().open_messages().await.unwrap().is_empty());
        assert_eq!(
            step("k1", OutboxStep::Skipped).await.unwrap(),
            StepOutcome::Refused
        );
        assert_eq!(
            step("missing", OutboxStep::Skipped).await.unwrap(),
            StepOutcome::Refused
        );
    });
    // The delivered copy is kept with its approval too.
    assert_eq!(db.get("a1").unwrap().unwrap().messages, vec![landed("8")]);
}

fn lists_lost_messages_for_a_while_and_lets_a_restarted_claimant_take_its_attempt_back(db: &Db) {
    db.insert(&new_approval("a1", 1_000)).unwrap();
    db.block_on(async {
        let planned = vec![
            message("k1", Some("a1"), "card"),
            message("k2", Some("a1"), "notice"),
            message("d1", None, "digest"),
        ];
        db.outbox().plan_messages(planned, 1_000).await.unwrap();
        let claim = db
            .outbox()
            .record_step("k1".into(), sending(1, "gw-a", 1_000_000), 2_000);
        assert_eq!(claim.await.unwrap(), StepOutcome::Applied);
        // Another gateway waits for the lease; the same one, restarted, takes it back at once.
        let other = db
            .outbox()
            .record_step("k1".into(), sending(2, "gw-b", 50_000), 3_000);
        assert_eq!(other.await.unwrap(), StepOutcome::Refused);
        let again = db
            .outbox()
            .record_step("k1".into(), sending(2, "gw-a", 50_000), 3_000);
        assert_eq!(again.await.unwrap(), StepOutcome::Applied);
        let lost = OutboxStep::Lost {
            reason: "in flight at a crash".into(),
        };
        assert_eq!(
            db.outbox()
                .record_step("k1".into(), lost, 4_000)
                .await
                .unwrap(),
            StepOutcome::Applied
        );
        let troubled = db.outbox().troubled_messages(4_000, 10).await.unwrap();
        assert_eq!(troubled.len(), 1);
        assert_eq!(troubled[0].state, OutboxState::Lost);
        assert!(
            db.outbox()
                .troubled_messages(4_001, 10)
                .await
                .unwrap()
                .is_empty()
        );
        let open: Vec<String> = db
            .outbox()
            .open_messages()
            .await
            .unwrap()
            .into_iter()
            .map(|entry| entry.message.key)
            .collect();
        assert_eq!(open, ["k2", "d1"]);
    });
}

#[test]
fn messages_go_with_their_pruned_approval_and_done_digests_with_history_of_their_age() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    db.insert(&new_approval("a1", 1_000)).unwrap();
    runtime().block_on(async {
        let planned = vec![
            message("k1", Some("a1"), "card"),
            message("d1", None, "digest"),
        ];
        db.plan_messages(planned, 1_000).await.unwrap();
        db.record_step("d1".into(), OutboxStep::Skipped, 1_500)
            .await
            .unwrap();
    });
    let expired = Resolution::Expired {
        reason: "timeout".into(),
    };
    db.resolve("a1", &expired, 2_000).unwrap();
    db.prune_terminal_before(5_000, 100).unwrap();
    runtime().block_on(async {
        assert!(db.open_messages().await.unwrap().is_empty());
        assert!(db.troubled_messages(0, 10).await.unwrap().is_empty());
    });
    let conn = Connection::open(dir.path().join("approvals.sqlite")).unwrap();
    let left: i64 = conn
        .query_row("SELECT count(*) FROM chat_outbox", [], |row| row.get(0))
        .unwrap();
    assert_eq!(left, 0);
}

/// An origin notice tells the requester where its approval was shown; it shows no command, and
/// the record's messages are where chat looks to see whether an approval was shown in a chat.
fn keeps_delivered_cards_with_their_approval_but_not_origin_notices(db: &Db) {
    db.insert(&new_approval("a1", 1_000)).unwrap();
    db.block_on(async {
        let outbox = db.outbox();
        let planned = vec![
            message("card1", Some("a1"), "card"),
            message("note1", Some("a1"), "notice"),
        ];
        outbox.plan_messages(planned, 1_000).await.unwrap();
        for (key, message_id) in [("card1", "10"), ("note1", "11")] {
            let claim = outbox.record_step(key.into(), sending(1, "gw-a", 9_000), 2_000);
            assert_eq!(claim.await.unwrap(), StepOutcome::Applied);
            let delivered = OutboxStep::Delivered {
                attempt: 1,
                message: landed(message_id),
            };
            let step = outbox.record_step(key.into(), delivered, 2_100);
            assert_eq!(step.await.unwrap(), StepOutcome::Applied);
        }
    });
    assert_eq!(db.get("a1").unwrap().unwrap().messages, vec![landed("10")]);
}

fn refuses_a_message_of_an_unknown_approval(db: &Db) {
    db.block_on(async {
        let planned = db
            .outbox()
            .plan_messages(vec![message("k1", Some("nobody"), "card")], 1_000)
            .await;
        assert!(planned.is_err());
        assert!(db.outbox().open_messages().await.unwrap().is_empty());
    });
}

#[test]
fn an_upgraded_database_carries_the_copies_of_pending_approvals_into_the_outbox() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.sqlite");
    {
        let db = open_db(&dir);
        db.insert(&new_approval("pending", 1_000)).unwrap();
        db.insert(&new_approval("decided", 1_000)).unwrap();
        db.record_delivery("pending", &landed("5")).unwrap();
        db.record_delivery("decided", &landed("6")).unwrap();
        let expired = Resolution::Expired {
            reason: "timeout".into(),
        };
        db.resolve("decided", &expired, 2_000).unwrap();
    }
    // Back to the version before the outbox, as a database written by an older build.
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch("DROP TABLE chat_outbox; PRAGMA user_version = 7;")
        .unwrap();
    drop(conn);
    let db = open_db(&dir);
    runtime().block_on(async {
        let open = db.open_messages().await.unwrap();
        assert_eq!(open.len(), 1);
        assert_eq!(open[0].message.approval_id.as_deref(), Some("pending"));
        assert_eq!(open[0].state, OutboxState::Delivered);
        assert_eq!(open[0].delivered, Some(landed("5")));
        // A key the chat core accepts as a send key (and Discord as a nonce).
        let key = &open[0].message.key;
        assert!(
            key.len() <= 25 && key.bytes().all(|b| b.is_ascii_alphanumeric()),
            "{key}"
        );
    });
}

on_both_stores! {
    applies_each_step_only_from_the_state_it_starts_in_and_fences_attempts,
    lists_lost_messages_for_a_while_and_lets_a_restarted_claimant_take_its_attempt_back,
    keeps_delivered_cards_with_their_approval_but_not_origin_notices,
    refuses_a_message_of_an_unknown_approval,
}
