//! Two services on one PostgreSQL database (as two replicas' would be), sharing their per-host
//! state: a session's `/elevated` level set through one applies to that session's exec on the
//! other, promptly, and a level dropped there is gone on both.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gatehouse_approvals::{ChatOutbox, SystemClock};
use gatehouse_chat::Platforms;
use gatehouse_fakes::postgres::TempDatabase;
use gatehouse_policy::Decision;
use gatehouse_policy::elevated::SenderIdentity;
use gatehouse_service::{ChatSetup, CheckInput, ExecContext, Ports, Publisher, Service};
use gatehouse_store::approvals_db::{PgApprovalStore, PgOptions, SqliteApprovalStore};

use crate::support::{AGENT, Recorder, setup_in};

/// Exec denied unless elevated; `/elevated` allowed to the Telegram sender 4242.
const CONFIG: &str = "{ tools: { elevated: { enabled: true, allowFrom: { telegram: ['4242'] } },
    exec: { security: 'deny' } } }";

/// A service on `database` with its own temp dir, its chat runtime started with no channel
/// (as `serve` starts it), so `elevated.directive` works.
async fn replica(database: &TempDatabase) -> (Service, tempfile::TempDir) {
    replica_in(database, tempfile::tempdir().unwrap()).await
}

/// [`replica`] on `dir`, which may hold a `sessions.json` of the host's.
async fn replica_in(
    database: &TempDatabase,
    dir: tempfile::TempDir,
) -> (Service, tempfile::TempDir) {
    let setup = setup_in(dir.path(), CONFIG);
    let store = Arc::new(
        PgApprovalStore::connect(database.url(), PgOptions::default())
            .await
            .unwrap(),
    );
    let ports = Ports {
        store: Arc::clone(&store) as _,
        clock: Arc::new(SystemClock),
        publisher: Arc::new(Recorder::default()) as Arc<dyn Publisher>,
    };
    let service = Service::prepare(setup)
        .unwrap()
        .share_state(Arc::new(store.documents()))
        .start(ports)
        .await
        .unwrap();
    // No channel sends anything here: the outbox and the chat lease are never used.
    let outbox: Arc<dyn ChatOutbox> = Arc::new(SqliteApprovalStore::open_in_memory().unwrap());
    service
        .start_chat(ChatSetup {
            channels: Vec::new(),
            platforms: Platforms::default(),
            outbox,
            instance: "replica".into(),
            sessions_file: dir.path().join("sessions.json"),
            shared: None,
        })
        .unwrap();
    (service, dir)
}

/// `exec.policy.check` of `echo hi` in session `s1`.
fn check(service: &Service) -> Decision {
    let input = CheckInput {
        command: Some("echo hi".into()),
        argv: None,
        cwd: std::env::temp_dir(),
        env: BTreeMap::new(),
        context: ExecContext {
            agent_id: "main".into(),
            session_key: Some("s1".into()),
            level: None,
            sender: None,
        },
    };
    service.check(&AGENT, input).unwrap().decision
}

fn directive(service: &Service, text: &str) -> String {
    let sender = SenderIdentity {
        channel: "telegram".into(),
        id: "4242".into(),
        ..SenderIdentity::default()
    };
    service
        .elevated_directive(&AGENT, text, &sender, "s1")
        .unwrap()
        .unwrap()
}

/// Polls until `service`'s check in `s1` decides `wanted`, for at most 10 s.
async fn until_decided(service: &Service, wanted: Decision) {
    let started = Instant::now();
    while check(service) != wanted {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "never decided {wanted:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_elevated_level_set_through_one_replica_applies_to_the_sessions_exec_on_the_other() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let (a, _dir_a) = replica(&database).await;
    let (b, dir_b) = replica(&database).await;
    assert_eq!(check(&a), Decision::Deny);
    assert_eq!(check(&b), Decision::Deny);

    let reply = tokio::task::block_in_place(|| directive(&a, "/elevated full"));
    assert!(reply.to_lowercase().contains("full"), "{reply}");
    assert_eq!(check(&a), Decision::Allow, "applied where it was set");
    until_decided(&b, Decision::Allow).await;
    // Nothing was written to the hosts' sessions files.
    assert!(!dir_b.path().join("sessions.json").exists());

    tokio::task::block_in_place(|| directive(&b, "/elevated off"));
    until_decided(&a, Decision::Deny).await;
}

/// The first replica on an empty database imports its host's `sessions.json`, so a level set
/// before the move to PostgreSQL still applies, on every replica.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_start_imports_the_hosts_session_levels() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sessions = serde_json::json!({"sessions": {"s1": {
        "elevated": "full",
        "elevatedBy": {"channel": "telegram", "id": "4242"},
    }}});
    std::fs::write(dir.path().join("sessions.json"), sessions.to_string()).unwrap();
    let (a, _dir_a) = replica_in(&database, dir).await;
    let (b, _dir_b) = replica(&database).await;
    assert_eq!(check(&a), Decision::Allow);
    assert_eq!(check(&b), Decision::Allow);
}
