//! Per-host state two real `gatehouse serve` replicas share through PostgreSQL
//! (docs/high-availability.md, "Per-host state shared through the database"): an allow-always
//! answered on one replica lets the command run without asking on the other, and an
//! `exec.approvals.set` based on a hash the other replica's write made stale is refused.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::gateway::{ADMIN, AGENT, APPROVER, Server};
use crate::replicas::{Replicas, request_argv};

/// `exec.policy.check` of `ls -la` for agent `main` on `server`: its decision.
async fn decision_on(server: &Server) -> Value {
    let checked = server
        .ok(
            AGENT,
            "exec.policy.check",
            json!({"command": "ls -la", "cwd": server.scratch(), "agentId": "main"}),
        )
        .await;
    checked["decision"].clone()
}

/// Polls `probe` until it holds, for at most 10 s (a notice crossing between replicas).
async fn eventually<F: Future<Output = bool>>(what: &str, mut probe: impl FnMut() -> F) {
    let started = Instant::now();
    while !probe().await {
        assert!(started.elapsed() < Duration::from_secs(10), "never: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn an_allow_always_answered_on_one_replica_lets_the_command_run_on_the_other_without_asking()
{
    let Replicas {
        _database,
        a,
        b,
        operator_a: _operator_a,
        mut operator_b,
    } = Replicas::start().await;
    assert_ne!(decision_on(&a).await, "allow", "not allowlisted yet");

    let id = request_argv(&a, &["ls", "-la"]).await;
    let requested = operator_b.event("exec.approval.requested").await;
    assert_eq!(requested["payload"]["id"], id.as_str());
    let answer = b.resolve(&id, "allow-always").await;
    assert_eq!(answer["payload"]["applied"], true, "{answer}");

    // The entry went to the shared document, not to either host's file.
    eventually("A allows `ls -la` without asking", || async {
        decision_on(&a).await == "allow"
    })
    .await;
    let shared = a.ok(APPROVER, "exec.approvals.get", json!({})).await;
    let entries = shared["file"]["agents"]["main"]["allowlist"]
        .as_array()
        .unwrap();
    assert_eq!(entries.len(), 1, "{shared}");
    let pattern = entries[0]["pattern"].as_str().unwrap();
    assert!(pattern.ends_with("/ls"), "{shared}");
    for host in [&a, &b] {
        let local =
            std::fs::read_to_string(host.data().join("exec-approvals.json")).unwrap_or_default();
        assert!(!local.contains(pattern), "{local}");
    }
}

#[tokio::test]
async fn a_set_on_one_replica_based_on_a_hash_the_other_made_stale_is_refused() {
    let Replicas {
        _database, a, b, ..
    } = Replicas::start().await;
    let read_on_a = a.ok(APPROVER, "exec.approvals.get", json!({})).await;
    let read_on_b = b.ok(APPROVER, "exec.approvals.get", json!({})).await;
    assert_eq!(read_on_a["hash"], read_on_b["hash"], "one document");

    let mut file = read_on_b["file"].clone();
    file["agents"] = json!({"main": {"allowlist": [{"pattern": "/usr/bin/make"}]}});
    let written = b
        .ok(
            ADMIN,
            "exec.approvals.set",
            json!({"file": file, "baseHash": read_on_b["hash"]}),
        )
        .await;
    assert_ne!(written["hash"], read_on_b["hash"]);

    // A's set, based on what A read before B's write, is refused whenever it arrives.
    let mut mine = read_on_a["file"].clone();
    mine["agents"] = json!({"main": {"allowlist": [{"pattern": "/usr/bin/git"}]}});
    assert_eq!(
        a.error_code(
            ADMIN,
            "exec.approvals.set",
            json!({"file": mine, "baseHash": read_on_a["hash"]})
        )
        .await,
        "conflict"
    );
    // A reads B's write, with its hash, and a set based on that applies.
    eventually("A reads B's write", || async {
        a.ok(APPROVER, "exec.approvals.get", json!({})).await["hash"] == written["hash"]
    })
    .await;
    let applied = a
        .ok(
            ADMIN,
            "exec.approvals.set",
            json!({"file": mine, "baseHash": written["hash"]}),
        )
        .await;
    assert_eq!(
        applied["file"]["agents"]["main"]["allowlist"][0]["pattern"],
        "/usr/bin/git"
    );
}

/// `gatehouse doctor` on a PostgreSQL store shows the agents' policies from the allowlists in
/// the database, not from a file in its data directory that no replica reads.
#[tokio::test]
async fn doctor_shows_the_allowlists_kept_in_the_database() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let server = crate::replicas::replica(&database).await;
    let read = server.ok(APPROVER, "exec.approvals.get", json!({})).await;
    let mut file = read["file"].clone();
    file["agents"] = json!({"ops": {"allowlist": [{"pattern": "/usr/bin/make"}]}});
    server
        .ok(
            ADMIN,
            "exec.approvals.set",
            json!({"file": file, "baseHash": read["hash"]}),
        )
        .await;

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gatehouse.json5");
    let store = format!("store: {{ kind: 'postgres', url: '{}' }},", database.url());
    std::fs::write(&config, crate::gateway::config_with_gateway(&store, "")).unwrap();
    let data = dir.path().join("data").display().to_string();
    let config = config.display().to_string();
    let run = crate::gatehouse(&["doctor", "--config", &config, "--data-dir", &data], "");
    assert!(
        run.stdout
            .contains("exec-approvals.json: kept in the database"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("agent ops:"), "{}", run.stdout);
}

/// The first replica on an empty database imports its host's `exec-approvals.json`; one
/// starting later reads the database's and leaves its own file unread (and unchanged).
#[tokio::test]
async fn the_first_replica_imports_its_hosts_allowlists_and_later_ones_read_the_databases() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let store = format!("store: {{ kind: 'postgres', url: '{}' }},", database.url());
    let host = |pattern: &str| {
        let dir = tempfile::tempdir().unwrap();
        let config = crate::gateway::config_with_gateway(&store, "");
        std::fs::write(dir.path().join("gatehouse.json5"), config).unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        let file = json!({"version": 1, "agents": {"main": {"allowlist": [{"pattern": pattern}]}}});
        std::fs::write(
            dir.path().join("data/exec-approvals.json"),
            file.to_string(),
        )
        .unwrap();
        dir
    };
    let (first, second) = (host("/usr/bin/rsync"), host("/usr/bin/other"));
    let second_file = std::fs::read(second.path().join("data/exec-approvals.json")).unwrap();

    let a = Server::start_in(first, "127.0.0.1:0").await;
    let b = Server::start_in(second, "127.0.0.1:0").await;
    for server in [&a, &b] {
        let read = server.ok(APPROVER, "exec.approvals.get", json!({})).await;
        let allowlist = &read["file"]["agents"]["main"]["allowlist"];
        assert_eq!(allowlist.as_array().unwrap().len(), 1, "{read}");
        assert_eq!(allowlist[0]["pattern"], "/usr/bin/rsync", "{read}");
    }
    assert_eq!(
        std::fs::read(b.data().join("exec-approvals.json")).unwrap(),
        second_file
    );
}
