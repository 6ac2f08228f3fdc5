//! The PostgreSQL event log several gateways number approval events by: appended in the
//! transaction of each transition (a losing or failing write appends nothing), numbered in
//! commit order without gaps, so a reader polling while many gateways commit never skips one;
//! and a manager whose connections were cut catches up from it, missing nothing.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use gatehouse_approvals::{
    ApprovalStore, EventKind, EventLog, EventSubscription, IdDisclosure, LogEntry, Resolution,
    RunNote, StoreError, mint_approval_id,
};
use gatehouse_policy::ApprovalDecision;
use gatehouse_store::approvals_db::{PgApprovalStore, PgOptions};
use tokio::sync::oneshot;

use crate::replica_managers::{CROSSING, Replica, replica, request};
use crate::replicas::answer;
use crate::support::new_approval;

async fn store(url: &str, max_connections: usize) -> Arc<PgApprovalStore> {
    let options = PgOptions {
        max_connections,
        ..PgOptions::default()
    };
    Arc::new(PgApprovalStore::connect(url, options).await.unwrap())
}

/// Queues a write without waiting for it; its answer, later.
fn queued<T: Send + 'static>(
    submit: impl FnOnce(gatehouse_approvals::Completion<T>),
) -> oneshot::Receiver<Result<T, StoreError>> {
    let (sender, receiver) = oneshot::channel();
    submit(Box::new(move |result| {
        let _ = sender.send(result);
    }));
    receiver
}

fn log(store: &PgApprovalStore) -> &dyn EventLog {
    ApprovalStore::event_log(store).unwrap()
}

fn deny(by: String) -> Resolution {
    Resolution::Decided {
        decision: ApprovalDecision::Deny,
        resolved_by: Some(by),
        reason: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transitions_append_their_events_in_their_own_transaction_and_losers_append_none() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let (a, b) = (
        store(database.url(), 8).await,
        store(database.url(), 8).await,
    );
    assert_eq!(
        log(&a).instance(),
        log(&b).instance(),
        "one log per database"
    );
    let id = mint_approval_id(1_000).to_string();
    answer(|done| a.insert(new_approval(&id, 1_000), done))
        .await
        .unwrap();
    // A refused insert rolls back, and the number it took is given back with it.
    let refused = answer(|done| b.insert(new_approval(&id, 1_000), done)).await;
    assert!(matches!(refused, Err(StoreError::DuplicateId { .. })));
    assert_eq!(log(&b).head().await.unwrap(), 1);

    let resolvers: Vec<_> = (0..32)
        .map(|i| {
            let store = Arc::clone(if i % 2 == 0 { &a } else { &b });
            let id = id.clone();
            tokio::spawn(async move {
                answer(|done| store.resolve(id, deny(format!("op{i}")), 2_000, done))
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut applied = 0;
    for resolver in resolvers {
        applied += usize::from(resolver.await.unwrap().applied());
    }
    assert_eq!(applied, 1);

    let page = log(&a).events_after(0, 100).await.unwrap();
    assert_eq!(page.head, 2);
    let seen: Vec<(u64, bool, &str)> = page
        .events
        .iter()
        .map(|e| match &e.entry {
            LogEntry::Approval { settled, record } => (e.seq, *settled, record.id.as_str()),
            LogEntry::Run(note) => panic!("no run was logged: {note:?}"),
        })
        .collect();
    assert_eq!(
        seen,
        [(1, false, id.as_str()), (2, true, id.as_str())],
        "one creation, one decision"
    );
    assert_eq!(log(&b).events_after(1, 100).await.unwrap().events.len(), 1);
}

/// The bug a plain sequence would have: numbers are taken when a statement runs, so one
/// writer's 7 can commit after another's 8, and a reader that saw 8 reads "after 8" for ever
/// after. Eight stores (gateways) write at once while a reader polls the way a follower does;
/// it must see every number exactly once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_polling_while_many_gateways_commit_sees_every_event_once_in_order() {
    const GATEWAYS: usize = 8;
    const APPROVALS: usize = 40;
    let database = gatehouse_fakes::postgres::database().unwrap();
    let mut stores = Vec::new();
    for _ in 0..GATEWAYS {
        stores.push(store(database.url(), 2).await);
    }
    let reader = store(database.url(), 2).await;
    let total = (GATEWAYS * APPROVALS * 2) as u64;

    let polling = tokio::spawn(async move {
        let mut seen = Vec::new();
        let mut after = 0;
        while after < total {
            let page = log(&reader).events_after(after, 16).await.unwrap();
            for event in &page.events {
                seen.push(event.seq);
                after = event.seq;
            }
            if page.events.len() < 16 {
                after = after.max(page.head);
            }
        }
        seen
    });
    let writers: Vec<_> = stores
        .iter()
        .enumerate()
        .map(|(gateway, store)| {
            let store = Arc::clone(store);
            tokio::spawn(async move {
                let mut written = Vec::new();
                for n in 0..APPROVALS {
                    let at = 1_000 + (gateway * APPROVALS + n) as u64;
                    let id = mint_approval_id(at).to_string();
                    let insert = new_approval(&id, at);
                    // Queued without waiting, so each store's writer always has work and the
                    // gateways' transactions overlap.
                    let inserted = queued(|done| store.insert(insert, done));
                    let resolution = deny(format!("g{gateway}"));
                    let resolved = queued(|done| store.resolve(id, resolution, at + 1, done));
                    written.push((inserted, resolved));
                }
                for (inserted, resolved) in written {
                    inserted.await.unwrap().unwrap();
                    assert!(resolved.await.unwrap().unwrap().applied());
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    let seen = tokio::time::timeout(CROSSING, polling)
        .await
        .unwrap()
        .unwrap();
    let skipped: Vec<u64> = (1..=total).filter(|seq| !seen.contains(seq)).collect();
    assert!(skipped.is_empty(), "the reader skipped {skipped:?}");
    assert_eq!(seen, (1..=total).collect::<Vec<_>>(), "once each, in order");
}

/// The next `count` events, as (seq, approval, settled).
async fn next_events(events: &mut EventSubscription, count: usize) -> Vec<(u64, String, bool)> {
    tokio::time::timeout(CROSSING, async {
        let mut got = Vec::new();
        while got.len() < count {
            let event = events.recv().await.unwrap();
            let settled = !matches!(event.kind, EventKind::Requested { .. });
            got.push((event.seq, event.id.to_string(), settled));
        }
        got
    })
    .await
    .unwrap()
}

/// Decides `created` as alice, as an operator would.
async fn decide(
    manager: &gatehouse_approvals::ApprovalManager,
    created: &gatehouse_approvals::Created,
    decision: ApprovalDecision,
) {
    let id = created.id.to_string();
    manager
        .resolve(&id, decision, "alice", IdDisclosure::Hidden)
        .await
        .unwrap();
}

/// Two replicas on `database` (B's connections named `replica-b`) and a client to cut B's
/// connections with.
async fn replicas_and_cutter(
    database: &gatehouse_fakes::postgres::TempDatabase,
) -> (Replica, Replica, tokio_postgres::Client) {
    let a = replica(database.url()).await;
    let b_url = format!("{}?application_name=replica-b", database.url());
    let b = replica(&b_url).await;
    let (client, connection) = tokio_postgres::connect(database.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    (a, b, client)
}

/// Terminates every connection of replica B (its listener, its pool): whatever is notified
/// before it listens again is lost.
async fn cut_b(client: &tokio_postgres::Client) {
    let cut = client
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = 'replica-b'",
            &[],
        )
        .await
        .unwrap();
    assert!(!cut.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_whose_connections_were_cut_catches_up_from_the_log_missing_nothing() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let (mut a, mut b, client) = replicas_and_cutter(&database).await;

    let first = a.manager.create(request(None)).await.unwrap();
    let both_saw = next_events(&mut b.events, 1).await;
    assert_eq!(both_saw, next_events(&mut a.events, 1).await);

    // B's listener (and pool) are cut; whatever is notified before it listens again is lost.
    cut_b(&client).await;
    let mut expected_ids = BTreeSet::new();
    for _ in 0..5 {
        let created = a.manager.create(request(None)).await.unwrap();
        decide(&a.manager, &created, ApprovalDecision::Deny).await;
        expected_ids.insert(created.id.to_string());
    }
    decide(&a.manager, &first, ApprovalDecision::AllowOnce).await;

    let on_a = next_events(&mut a.events, 11).await;
    let on_b = next_events(&mut b.events, 11).await;
    assert_eq!(on_b, on_a, "the same events, numbers and order on both");
    let seqs: Vec<u64> = on_b.iter().map(|(seq, _, _)| *seq).collect();
    assert_eq!(seqs, (2..=12).collect::<Vec<_>>());
    let ids: BTreeSet<String> = on_b
        .iter()
        .filter(|(_, id, _)| *id != first.id.to_string())
        .map(|(_, id, _)| id.clone())
        .collect();
    assert_eq!(ids, expected_ids);
    // Nothing more, nothing twice.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(b.events.try_recv().is_none());
    // B's memory followed too: the decision is known there.
    let record = b.manager.await_decision(first.id).await.unwrap();
    assert_eq!(record.decision, Some(ApprovalDecision::AllowOnce));
}

/// A run event as a gateway would log it; the body is opaque to the log.
fn run_note(gateway: usize, n: usize) -> RunNote {
    RunNote {
        run_id: uuid::Uuid::new_v4(),
        body: format!("{{\"gateway\":{gateway},\"n\":{n}}}"),
    }
}

/// Run events take their numbers from the same counter as approval events: two stores
/// appending both at once give one gap-free order, each store's writes in the order it
/// submitted them, every run read back as it was written; and run events leave the log with
/// history of their age.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_events_and_approval_events_from_two_stores_share_one_gap_free_order() {
    const EACH: usize = 30;
    let database = gatehouse_fakes::postgres::database().unwrap();
    let stores = [
        store(database.url(), 4).await,
        store(database.url(), 4).await,
    ];
    let writers: Vec<_> = stores
        .iter()
        .enumerate()
        .map(|(gateway, store)| {
            let store = Arc::clone(store);
            tokio::spawn(async move {
                let mut submitted = Vec::new();
                let mut answers = Vec::new();
                for n in 0..EACH {
                    let at = 1_000 + (gateway * EACH + n) as u64;
                    let id = mint_approval_id(at).to_string();
                    let inserted = queued(|done| store.insert(new_approval(&id, at), done));
                    let note = run_note(gateway, n);
                    let appended = log(&store).append_run(note.clone(), at);
                    submitted.push(id);
                    submitted.push(note.body.clone());
                    answers.push((inserted, appended, note));
                }
                let mut notes = Vec::new();
                for (inserted, appended, note) in answers {
                    inserted.await.unwrap().unwrap();
                    assert!(appended.await.unwrap() > 0);
                    notes.push(note);
                }
                (submitted, notes)
            })
        })
        .collect();
    let mut submitted = Vec::new();
    let mut notes = Vec::new();
    for writer in writers {
        let (written, logged) = writer.await.unwrap();
        submitted.push(written);
        notes.extend(logged);
    }

    let total = (2 * EACH * 2) as u64;
    let page = log(&stores[1]).events_after(0, 1_000).await.unwrap();
    assert_eq!(page.head, total);
    let seqs: Vec<u64> = page.events.iter().map(|event| event.seq).collect();
    assert_eq!(seqs, (1..=total).collect::<Vec<_>>(), "one order, no gap");
    let subject = |entry: &LogEntry| match entry {
        LogEntry::Approval { record, .. } => record.id.clone(),
        LogEntry::Run(note) => note.body.clone(),
    };
    let order: Vec<String> = page.events.iter().map(|e| subject(&e.entry)).collect();
    for written in &submitted {
        let own: Vec<&String> = order.iter().filter(|s| written.contains(s)).collect();
        assert_eq!(
            own,
            written.iter().collect::<Vec<_>>(),
            "each store's order kept"
        );
    }
    let runs: Vec<&RunNote> = page
        .events
        .iter()
        .filter_map(|event| match &event.entry {
            LogEntry::Run(note) => Some(note),
            LogEntry::Approval { .. } => None,
        })
        .collect();
    assert_eq!(runs.len(), 2 * EACH);
    assert!(
        notes.iter().all(|note| runs.contains(&note)),
        "read back as written"
    );

    // Pruning history older than 1,010 ms takes the runs dated before it, and only those.
    answer(|done| stores[0].prune_terminal_before(1_010, 1_000, done))
        .await
        .unwrap();
    let page = log(&stores[0]).events_after(0, 1_000).await.unwrap();
    let runs_left = page
        .events
        .iter()
        .filter(|event| matches!(event.entry, LogEntry::Run(_)))
        .count();
    assert_eq!(runs_left, 2 * EACH - 10);
}

/// The next `count` events, as (seq, subject, what): a run's subject is its run id.
async fn next_logged(events: &mut EventSubscription, count: usize) -> Vec<(u64, String, String)> {
    tokio::time::timeout(CROSSING, async {
        let mut got = Vec::new();
        while got.len() < count {
            let event = events.recv().await.unwrap();
            let what = match &event.kind {
                EventKind::Run { body } => format!("run {body}"),
                EventKind::Requested { .. } => "requested".to_owned(),
                _ => "settled".to_owned(),
            };
            got.push((event.seq, event.id.to_string(), what));
        }
        got
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_whose_connections_were_cut_catches_up_on_run_events_too() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let (mut a, mut b, client) = replicas_and_cutter(&database).await;

    // A run event logged on A is announced on both, under the log's number.
    let first = run_note(0, 0);
    let seq = a.manager.log_run(first.clone()).unwrap().await.unwrap();
    let on_b = next_logged(&mut b.events, 1).await;
    assert_eq!(on_b, next_logged(&mut a.events, 1).await);
    assert_eq!(
        on_b,
        [(seq, first.run_id.to_string(), format!("run {}", first.body))]
    );

    cut_b(&client).await;
    // Runs and approvals on A while B hears nothing.
    for n in 1..=4 {
        let created = a.manager.create(request(None)).await.unwrap();
        a.manager.log_run(run_note(0, n)).unwrap().await.unwrap();
        decide(&a.manager, &created, ApprovalDecision::Deny).await;
    }
    let on_a = next_logged(&mut a.events, 12).await;
    let on_b = next_logged(&mut b.events, 12).await;
    assert_eq!(on_b, on_a, "the same events, numbers and order on both");
    let seqs: Vec<u64> = on_b.iter().map(|(seq, _, _)| *seq).collect();
    assert_eq!(seqs, (seq + 1..=seq + 12).collect::<Vec<_>>());
    let runs = on_b
        .iter()
        .filter(|(_, _, what)| what.starts_with("run "))
        .count();
    assert_eq!(runs, 4);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(b.events.try_recv().is_none(), "nothing twice");
}

/// Reading the log must cost the same however long the history is: each event's approval is
/// looked up by its key, never found by scanning the approvals table. Without fresh planner
/// statistics (the state of a database between autovacuum's analyses) the first version of the
/// read joined the log to the whole table, so request→decision grew by about a millisecond per
/// thousand approvals kept. The real store's plans are read from the server's log
/// (`auto_explain`, enabled for this database only) after a history long enough to tempt a
/// scan, and under both the custom and the generic plans PostgreSQL picks for a statement it
/// has run many times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catching_up_looks_each_approval_up_by_key_however_long_the_history() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let (admin, connection) = tokio_postgres::connect(database.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let name = database.name();
    admin
        .batch_execute(&format!(
            "ALTER DATABASE {name} SET session_preload_libraries = 'auto_explain';
             ALTER DATABASE {name} SET auto_explain.log_min_duration = 0;"
        ))
        .await
        .unwrap();

    let mut replica = replica(database.url()).await;
    for _ in 0..600 {
        let (created, decision) = replica.manager.create_awaited(request(None)).await.unwrap();
        // Announced once read back from the log: one read per creation at least.
        loop {
            let event = tokio::time::timeout(CROSSING, replica.events.recv())
                .await
                .unwrap()
                .unwrap();
            if event.id == created.id && matches!(event.kind, EventKind::Requested { .. }) {
                break;
            }
        }
        let answer = replica
            .manager
            .resolve(
                &created.id.to_string(),
                ApprovalDecision::AllowOnce,
                "operator",
                IdDisclosure::Hidden,
            )
            .await
            .unwrap();
        assert!(answer.outcome.applied());
        decision.decided().await.unwrap();
    }

    let server_log = database.cluster().log();
    let reads: Vec<&str> = server_log
        .split("duration: ")
        .filter(|entry| entry.contains("FROM approval_events"))
        .collect();
    assert!(
        reads.len() >= 600,
        "auto_explain logged {} plans of the log's read",
        reads.len()
    );
    let scanning: Vec<&&str> = reads
        .iter()
        .filter(|plan| plan.contains("Seq Scan on approvals"))
        .collect();
    assert!(
        scanning.is_empty(),
        "{} of {} reads of the log scanned the approvals table, e.g.:\n{}",
        scanning.len(),
        reads.len(),
        scanning[0]
    );
}
