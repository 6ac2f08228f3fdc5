//! One audit chain for two real `gatehouse serve` replicas on PostgreSQL (docs/audit.md, "In
//! the database"): a tool check on A, a request on A and its decision on B land in the database's one
//! chain; `gatehouse audit verify` (reading the config's store), `audit.verify` and `audit.tail`
//! read it; an SQL `UPDATE` of one record is named by its seq.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::gateway::{ADMIN, AGENT, Server, config_with_gateway};
use crate::replicas::{Replicas, request};

/// `gatehouse audit verify --json --config <a config naming the database>`: exit code and
/// verdict.
fn verify_cli(url: &str) -> (i32, Value) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gatehouse.json5");
    let store = format!("store: {{ kind: 'postgres', url: '{url}' }},");
    std::fs::write(&config, config_with_gateway(&store, "")).unwrap();
    let config = config.display().to_string();
    let run = crate::gatehouse(&["audit", "verify", "--json", "--config", &config], "");
    let verdict = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|_| panic!("{} {}", run.stdout, run.stderr));
    (run.code, verdict)
}

/// `audit.tail` on `server` until it holds a record matching `wanted`, for at most 10 s (the
/// sink appends a few ms after the event); every record returned.
async fn tail_until(server: &Server, wanted: impl Fn(&Value) -> bool) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let tail = server.ok(ADMIN, "audit.tail", json!({"limit": 100})).await;
        let records = tail["records"].as_array().unwrap().clone();
        if records.iter().any(&wanted) {
            return records;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "never in the tail: {records:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_request_on_one_replica_and_its_decision_on_the_other_land_in_one_chain_that_names_an_edit()
 {
    let Replicas {
        _database: database,
        a,
        b,
        operator_a: _operator_a,
        mut operator_b,
    } = Replicas::start().await;
    let call = json!({"agentId": "main", "sessionKey": "s1", "tool": "web_search",
                      "params": {"query": "audited"}});
    a.ok(AGENT, "tools.call.check", call).await;
    let id = request(&a).await;
    // B answers once it has heard of the approval.
    while operator_b.event("exec.approval.requested").await["payload"]["id"] != id.as_str() {}
    let answer = b.resolve(&id, "deny").await;
    assert_eq!(answer["payload"]["applied"], true, "{answer}");

    // Both replicas read the one chain: A's run and request, B's decision.
    let records = tail_until(&a, |r| r["payload"]["method"] == "tools.call.check").await;
    let of_approval: Vec<&str> = records
        .iter()
        .filter(|r| r["approvalId"] == id.as_str())
        .map(|r| r["payload"]["transition"].as_str().unwrap())
        .collect();
    assert_eq!(of_approval, ["requested", "denied"], "{records:?}");
    let seqs: Vec<u64> = records.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    assert_eq!(
        tail_until(&b, |r| r["payload"]["method"] == "tools.call.check").await,
        records
    );
    let on_b = b.ok(ADMIN, "audit.verify", json!({})).await;
    assert_eq!(on_b["valid"], true, "{on_b}");
    assert_eq!(on_b["files"], json!(["postgres:audit_records"]));
    // Nothing went to either replica's data directory.
    for host in [&a, &b] {
        let local = std::fs::read_to_string(host.data().join("audit.jsonl")).unwrap_or_default();
        assert!(!local.contains("audited"), "{local}");
    }

    let (code, verdict) = verify_cli(database.url());
    assert_eq!(code, 0, "{verdict}");
    assert_eq!(verdict["records"], seqs.len(), "{verdict}");

    // An SQL UPDATE of the decision's record is named by its seq, by the CLI and the RPC.
    let decided = records
        .iter()
        .find(|r| r["payload"]["transition"] == "denied")
        .unwrap()["seq"]
        .as_i64()
        .unwrap();
    let (client, connection) = tokio_postgres::connect(database.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .execute(
            "UPDATE audit_records SET line = replace(line, '\"denied\"', '\"allowed\"') \
             WHERE seq = $1",
            &[&decided],
        )
        .await
        .unwrap();
    let (code, verdict) = verify_cli(database.url());
    assert_eq!(code, 1, "{verdict}");
    assert_eq!(verdict["problem"]["kind"], "content-edited", "{verdict}");
    assert_eq!(verdict["problem"]["seq"], decided, "{verdict}");
    let on_a = a.ok(ADMIN, "audit.verify", json!({})).await;
    assert_eq!(on_a["problem"]["seq"], decided, "{on_a}");
}
