//! Operating two real `gatehouse serve` replicas on one PostgreSQL database (a real server the
//! tests start): the database restarted under them with approvals pending and clients
//! connected, an operator on one replica counted as an approval route on the other, and the
//! documented backup (`pg_dump`, `pg_restore` into a new database) brought back under a new
//! replica.

use std::time::Duration;

use gatehouse_fakes::postgres::TempCluster;
use serde_json::{Value, json};

use crate::gateway::{AGENT, APPROVER, Server, Ws};
use crate::replicas::{replica_on, request, request_argv, resolved_event, wait_decision};

/// How long replicas may take to reconnect to a restarted database on this loaded machine.
const RECONNECT: Duration = Duration::from_secs(60);

/// Kills the database server (SIGKILL, as in a crash) and starts it again on the same port
/// with its data; the cluster's calls block, so they run off the runtime's threads.
async fn restart_database(cluster: TempCluster) -> TempCluster {
    tokio::task::spawn_blocking(move || {
        let mut cluster = cluster;
        cluster.kill().unwrap();
        cluster.start_again().unwrap();
        cluster
    })
    .await
    .unwrap()
}

/// Tries `attempt` every 250 ms until it gives an answer, for at most `within`; the answer.
async fn until<T, F: Future<Output = Option<T>>>(
    within: Duration,
    what: &str,
    mut attempt: impl FnMut() -> F,
) -> T {
    tokio::time::timeout(within, async {
        loop {
            if let Some(answer) = attempt().await {
                return answer;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{what} within {within:?}"))
}

/// `method` on `server` as the approver, again while the replica still reports the store
/// failing (its first statement after the restart may meet a connection the crash broke); the
/// first answer that is not a store failure.
async fn after_restart(server: &Server, method: &str, params: Value) -> Value {
    until(RECONNECT, "the replica's store did not recover", || async {
        let answer = server.rpc(APPROVER, method, params.clone()).await;
        let failing = answer["ok"] == false && answer["error"]["code"] == "store";
        (!failing).then_some(answer)
    })
    .await
}

/// The next `exec.approval.requested` event about `id`.
async fn requested_event(operator: &mut Ws, id: &str) -> Value {
    loop {
        let event = operator.event("exec.approval.requested").await;
        if event["payload"]["id"] == id {
            return event["payload"].clone();
        }
    }
}

#[tokio::test]
async fn the_database_restarted_under_two_replicas_loses_no_approval_and_both_carry_on() {
    let cluster = tokio::task::spawn_blocking(TempCluster::start)
        .await
        .unwrap()
        .unwrap();
    let url = cluster.url();
    let a = replica_on(&url).await;
    let b = replica_on(&url).await;
    let mut operator_a = a.ws(APPROVER).await;
    let mut operator_b = b.ws(APPROVER).await;

    // One approval pending from each replica, each announced on the other, and a requester
    // waiting on A for A's.
    let on_a = request(&a).await;
    let on_b = request(&b).await;
    requested_event(&mut operator_b, &on_a).await;
    requested_event(&mut operator_a, &on_b).await;
    let waiter = tokio::spawn(wait_decision(&a, &on_a));

    let _cluster = restart_database(cluster).await;

    // Both approvals are still pending, and each is decided on the replica that did not
    // create it: both replicas' pools reconnected.
    for (server, id) in [(&a, &on_b), (&b, &on_a)] {
        let still = after_restart(server, "exec.approval.get", json!({"id": id})).await;
        assert_eq!(still["payload"]["state"], "pending", "{still}");
    }
    for (server, id, decision) in [(&b, &on_a, "allow-once"), (&a, &on_b, "deny")] {
        let params = json!({"id": id, "decision": decision});
        let answer = after_restart(server, "exec.approval.resolve", params).await;
        assert_eq!(answer["payload"]["applied"], true, "{answer}");
    }

    // A's requester, whose wait spanned the restart, hears B's decision; each replica's
    // operator, connected throughout, sees the decision made on the other (both listeners
    // reconnected and caught up).
    let decided = tokio::time::timeout(RECONNECT, waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(decided["payload"]["decision"], "allow-once", "{decided}");
    let seen_on_a = tokio::time::timeout(RECONNECT, resolved_event(&mut operator_a, &on_a))
        .await
        .unwrap();
    assert_eq!(seen_on_a["decision"], "allow-once", "{seen_on_a}");
    let seen_on_b = tokio::time::timeout(RECONNECT, resolved_event(&mut operator_b, &on_b))
        .await
        .unwrap();
    assert_eq!(seen_on_b["decision"], "deny", "{seen_on_b}");

    // New approvals flow across as before the restart.
    let after = request(&b).await;
    requested_event(&mut operator_a, &after).await;
    let answer = a.resolve(&after, "deny").await;
    assert_eq!(answer["payload"]["applied"], true, "{answer}");

    // Nothing lost: every approval reads the same, settled, on both replicas.
    for server in [&a, &b] {
        for (id, state) in [(&on_a, "allowed"), (&on_b, "denied"), (&after, "denied")] {
            let record = server
                .ok(APPROVER, "exec.approval.get", json!({"id": id}))
                .await;
            assert_eq!(record["state"], state, "{record}");
        }
    }
}

/// How long replicas may take to hear of each other's approval routes: a heartbeat each way
/// (2 s) on a loaded machine.
const ROUTES_SEEN: Duration = Duration::from_secs(30);

/// An approval asked for on `server` (two-phase), and its record right after: `expired` when
/// the replica found no approval route.
async fn asked(server: &Server) -> (String, Value) {
    let id = request(server).await;
    let record = server
        .ok(APPROVER, "exec.approval.get", json!({"id": id}))
        .await;
    (id, record)
}

/// Asks on `server` until an approval's state right after asking is `state` (the replicas
/// learn of each other's routes by heartbeat); that approval's id and record.
async fn asked_until(server: &Server, state: &str) -> (String, Value) {
    until(ROUTES_SEEN, &format!("no approval was {state}"), || async {
        let (id, record) = asked(server).await;
        (record["state"] == state).then_some((id, record))
    })
    .await
}

#[tokio::test]
async fn an_operator_on_one_replica_is_an_approval_route_for_requests_on_the_other() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let a = replica_on(database.url()).await;
    let b = replica_on(database.url()).await;
    // Nobody anywhere: refused at once, as on one gateway.
    let (_, refused) = asked(&b).await;
    assert_eq!(refused["state"], "expired", "{refused}");
    assert_eq!(refused["reason"], "no-approval-route", "{refused}");

    // An operator on A only: a request on B stays pending, and A's operator decides it.
    let mut operator_a = a.ws(APPROVER).await;
    let (id, _) = asked_until(&b, "pending").await;
    requested_event(&mut operator_a, &id).await;
    let waiter = tokio::spawn(wait_decision(&b, &id));
    let answer = a.resolve(&id, "allow-once").await;
    assert_eq!(answer["payload"]["applied"], true, "{answer}");
    let decided = tokio::time::timeout(RECONNECT, waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(decided["payload"]["decision"], "allow-once", "{decided}");

    // A's operator leaves: once B hears of it, B refuses at once again.
    drop(operator_a);
    let (_, refused) = asked_until(&b, "expired").await;
    assert_eq!(refused["reason"], "no-approval-route", "{refused}");
}

/// `exec.policy.check` of `ls -la` for agent `main` on `server`: its decision.
async fn ls_decision(server: &Server) -> Value {
    let params = json!({"command": "ls -la", "cwd": server.scratch(), "agentId": "main"});
    server.ok(AGENT, "exec.policy.check", params).await["decision"].clone()
}

/// The backup docs/high-availability.md describes, taken while two replicas write, restored
/// into a new database and served by a new replica: the settled history, the allowlist entry
/// an allow-always wrote, a pending approval (adopted, and decided there) all come back, event
/// numbers go on above the dumped ones, and the restored log has a new instance, so an
/// operator who saw numbers the backup lacks replays from the start instead of trusting them.
#[tokio::test]
async fn a_pg_dump_restored_into_a_new_database_brings_every_approval_and_allowlist_back() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let a = replica_on(database.url()).await;
    let b = replica_on(database.url()).await;
    let (mut operator_a, hello) = a.ws_with(APPROVER, json!({})).await;
    let mut operator_b = b.ws(APPROVER).await;
    let old_instance = hello["server"]["instance"].clone();

    let denied = request(&a).await;
    requested_event(&mut operator_b, &denied).await;
    assert_eq!(b.resolve(&denied, "deny").await["payload"]["applied"], true);
    let always = request_argv(&a, &["ls", "-la"]).await;
    requested_event(&mut operator_b, &always).await;
    let answer = b.resolve(&always, "allow-always").await;
    assert_eq!(answer["payload"]["applied"], true, "{answer}");
    let pending = request(&a).await;
    let last_seen = loop {
        let event = operator_a.event("exec.approval.requested").await;
        if event["payload"]["id"] == pending.as_str() {
            break event["seq"].as_u64().unwrap();
        }
    };

    let restored_name = format!("{}_restored", database.name());
    let (cluster, from) = (database.cluster(), database.name().to_owned());
    let restored_url = tokio::task::spawn_blocking({
        let restored_name = restored_name.clone();
        move || cluster.dump_and_restore(&from, &restored_name)
    })
    .await
    .unwrap()
    .unwrap();
    drop((a, b));

    let c = replica_on(&restored_url).await;
    let (mut operator_c, hello) = c.ws_with(APPROVER, json!({})).await;
    assert_ne!(hello["server"]["instance"], old_instance, "{hello}");
    for (id, state) in [
        (&denied, "denied"),
        (&always, "allowed"),
        (&pending, "pending"),
    ] {
        let record = c.ok(APPROVER, "exec.approval.get", json!({"id": id})).await;
        assert_eq!(record["state"], state, "{record}");
    }
    assert_eq!(ls_decision(&c).await, "allow", "the allowlist came back");
    let answer = c.resolve(&pending, "allow-once").await;
    assert_eq!(answer["payload"]["applied"], true, "{answer}");
    let resolved = loop {
        let event = operator_c.event("exec.approval.resolved").await;
        if event["payload"]["id"] == pending.as_str() {
            break event;
        }
    };
    assert!(
        resolved["seq"].as_u64().unwrap() > last_seen,
        "numbers go on above the dumped ones: {resolved}, last seen {last_seen}"
    );
    drop((c, operator_c));
    cluster.drop_database(&restored_name).unwrap();
}
