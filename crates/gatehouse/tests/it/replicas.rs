//! Two real `gatehouse serve` replicas on one PostgreSQL database (a real server the tests
//! start): an approval created on one is answered on the other, concurrent answers spread over
//! both have one winner and one event, and a replica killed and started again mid-flight
//! takes its approvals back instead of cancelling them.

use std::time::Duration;

use gatehouse_fakes::postgres::TempDatabase;
use serde_json::{Value, json};

use crate::gateway::{AGENT, APPROVER, Server, Ws, config_with_gateway};

/// Long enough for a notice to cross between replicas on this loaded machine.
const QUIET: Duration = Duration::from_secs(2);

/// A replica on `database`, with its own data directory.
pub(crate) async fn replica(database: &TempDatabase) -> Server {
    replica_on(database.url()).await
}

/// A replica on the database at `url`, with its own data directory.
pub(crate) async fn replica_on(url: &str) -> Server {
    let store = format!("store: {{ kind: 'postgres', url: '{url}' }},");
    Server::start_with_config(&config_with_gateway(&store, "")).await
}

/// Two replicas on a fresh database, each with an operator connected (so each has an approval
/// route).
pub(crate) struct Replicas {
    pub(crate) _database: TempDatabase,
    pub(crate) a: Server,
    pub(crate) b: Server,
    pub(crate) operator_a: Ws,
    pub(crate) operator_b: Ws,
}

impl Replicas {
    pub(crate) async fn start() -> Replicas {
        let database = gatehouse_fakes::postgres::database().unwrap();
        let a = replica(&database).await;
        let b = replica(&database).await;
        let operator_a = a.ws(APPROVER).await;
        let operator_b = b.ws(APPROVER).await;
        Replicas {
            _database: database,
            a,
            b,
            operator_a,
            operator_b,
        }
    }
}

/// A pending approval of `make deploy` created on `server` (an operator is connected there,
/// so it has a route); its id.
pub(crate) async fn request(server: &Server) -> String {
    request_argv(server, &["make", "deploy"]).await
}

/// A pending approval of `argv` (as agent `main`, session `s1`) created on `server`; its id.
pub(crate) async fn request_argv(server: &Server, argv: &[&str]) -> String {
    let params = json!({
        "command": argv.join(" "),
        "argv": argv,
        "cwd": server.scratch(),
        "agentId": "main",
        "sessionKey": "s1",
        "twoPhase": true,
    });
    let accepted = server.ok(AGENT, "exec.approval.request", params).await;
    assert_eq!(accepted["status"], "accepted", "{accepted}");
    accepted["id"].as_str().unwrap().to_owned()
}

/// The next `exec.approval.resolved` event about `id`.
pub(crate) async fn resolved_event(operator: &mut Ws, id: &str) -> Value {
    loop {
        let event = operator.event("exec.approval.resolved").await;
        if event["payload"]["id"] == id {
            return event["payload"].clone();
        }
    }
}

/// Waits on `server` for `id`'s decision, as the requester does.
pub(crate) fn wait_decision(server: &Server, id: &str) -> impl Future<Output = Value> + use<> {
    let base = server.base.clone();
    let id = id.to_owned();
    async move {
        let answer: Value = reqwest::Client::new()
            .post(format!("{base}/rpc"))
            .bearer_auth(AGENT)
            .json(&json!({"method": "exec.approval.waitDecision", "params": {"id": id}}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer
    }
}

#[tokio::test]
async fn an_approval_created_on_one_replica_is_decided_on_the_other_and_its_waiter_answered() {
    let Replicas {
        _database,
        a,
        b,
        mut operator_a,
        mut operator_b,
    } = Replicas::start().await;

    let id = request(&a).await;
    let waiter = tokio::spawn(wait_decision(&a, &id));
    // B's operators hear of it, and answer it there.
    let requested = operator_b.event("exec.approval.requested").await;
    assert_eq!(requested["payload"]["id"], id.as_str());
    let answer = b.resolve(&id[..8], "allow-once").await;
    assert_eq!(answer["payload"]["applied"], true, "{answer}");

    let decided = tokio::time::timeout(Duration::from_secs(30), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(decided["payload"]["decision"], "allow-once", "{decided}");
    // A's operators see the decision made on B.
    let seen_on_a = resolved_event(&mut operator_a, &id).await;
    assert_eq!(seen_on_a["resolvedBy"], "approver");
    assert_eq!(seen_on_a["decision"], "allow-once");
}

#[tokio::test]
async fn thirty_two_resolvers_over_two_replicas_have_one_winner_and_each_replica_one_event() {
    let Replicas {
        _database,
        a,
        b,
        mut operator_a,
        mut operator_b,
    } = Replicas::start().await;
    let id = request(&a).await;
    operator_b.event("exec.approval.requested").await;

    let replicas = [&a, &b];
    let answers = futures_util::future::join_all((0..32).map(|i| {
        let decision = if i % 2 == 0 { "allow-once" } else { "deny" };
        replicas[i % 2].resolve(&id, decision)
    }))
    .await;
    let applied: Vec<&Value> = answers
        .iter()
        .filter(|answer| answer["ok"] == true && answer["payload"]["applied"] == true)
        .collect();
    let winners: std::collections::BTreeSet<String> = applied
        .iter()
        .map(|answer| answer["payload"]["decision"].to_string())
        .collect();
    // Repeats of the winning answer are idempotent successes; exactly one decision won.
    assert_eq!(winners.len(), 1, "{answers:?}");
    for answer in &answers {
        assert_eq!(answer["ok"], true, "{answer}");
    }

    for operator in [&mut operator_a, &mut operator_b] {
        let event = resolved_event(operator, &id).await;
        assert_eq!(event["decision"].to_string(), *winners.first().unwrap());
        let second = tokio::time::timeout(QUIET, resolved_event(operator, &id)).await;
        assert!(second.is_err(), "a second resolved event: {second:?}");
    }
}

#[tokio::test]
async fn a_replica_killed_and_started_again_mid_flight_keeps_its_approval_pending() {
    let Replicas {
        _database,
        a,
        b,
        operator_a: _operator_a,
        mut operator_b,
    } = Replicas::start().await;
    let id = request(&a).await;
    operator_b.event("exec.approval.requested").await;

    // A crashes with the approval pending, and comes back: the approval is not cancelled.
    let a = a.restart_after_kill().await;
    let still = a.ok(APPROVER, "exec.approval.get", json!({"id": id})).await;
    assert_eq!(still["state"], "pending", "{still}");

    let waiter = tokio::spawn(wait_decision(&a, &id));
    let answer = b.resolve(&id, "deny").await;
    assert_eq!(answer["payload"]["applied"], true, "{answer}");
    let decided = tokio::time::timeout(Duration::from_secs(30), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(decided["payload"]["decision"], "deny", "{decided}");
}

#[tokio::test]
async fn doctor_reports_the_database_reachable_and_migrated_or_refuses_one_it_cannot_reach() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gatehouse.json5");
    let url_file = dir.path().join("db-url");
    std::fs::write(&url_file, database.url()).unwrap();
    std::fs::set_permissions(
        &url_file,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let store = format!(
        "store: {{ kind: 'postgres', urlFile: '{}' }},",
        url_file.display()
    );
    std::fs::write(&config, config_with_gateway(&store, "")).unwrap();
    let data = dir.path().join("data");
    let args = |config: &std::path::Path| {
        vec![
            "doctor".to_owned(),
            "--config".to_owned(),
            config.display().to_string(),
            "--data-dir".to_owned(),
            data.display().to_string(),
        ]
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        crate::gatehouse(&args, "")
    };

    let fresh = run(args(&config));
    assert!(
        fresh
            .stdout
            .contains("approvals database (PostgreSQL): reachable, not migrated yet"),
        "{}",
        fresh.stdout
    );
    let _serving = replica(&database).await;
    let migrated = run(args(&config));
    assert!(
        migrated
            .stdout
            .contains("approvals database (PostgreSQL): reachable, schema version 8 of 8"),
        "{}",
        migrated.stdout
    );

    // No server there: what `serve` would refuse, named, without the password.
    let unreachable = dir.path().join("unreachable.json5");
    let url = "postgres://gatehouse:hunter2@127.0.0.1:1/gatehouse?sslmode=disable";
    let store = format!("store: {{ kind: 'postgres', url: '{url}' }},");
    std::fs::write(&unreachable, config_with_gateway(&store, "")).unwrap();
    let refused = run(args(&unreachable));
    assert_eq!(refused.code, 2, "{}", refused.stdout);
    assert!(refused.stdout.contains("error: "), "{}", refused.stdout);
    assert!(!refused.stdout.contains("hunter2"), "{}", refused.stdout);
}
