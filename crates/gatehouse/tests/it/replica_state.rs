//! Per-host state two real `gatehouse serve` replicas share through PostgreSQL
//! (docs/high-availability.md, "Per-host state shared through the database"): an allow-always
//! answered on one replica lets the command run without asking on the other, and an
//! `exec.approvals.set` based on a hash the other replica's write made stale is refused.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::gateway::{ADMIN, AGENT, APPROVER, Server};
use crate::replicas::Replicas;

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

    let params = json!({
        "command": "ls -la",
        "argv": ["ls", "-la"],
        "cwd": a.scratch(),
        "agentId": "main",
        "sessionKey": "s1",
        "twoPhase": true,
    });
    let accepted = a.ok(AGENT, "exec.approval.request", params).await;
    let id = accepted["id"].as_str().unwrap().to_owned();
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
