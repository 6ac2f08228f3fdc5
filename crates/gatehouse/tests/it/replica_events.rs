//! One approval event sequence over two real `gatehouse serve` replicas on one PostgreSQL
//! database: an operator connected to one sees the other's events in order, under the numbers
//! every replica gives them, and a client that reconnects to another replica with `since`
//! gets exactly the events it missed, from that replica's memory or, for a replica started
//! since, from the database's log.

use serde_json::{Value, json};

use crate::gateway::{APPROVER, Ws};
use crate::replicas::{replica, request};

/// The next events named `names`, in that order, as (event, approval id, seq).
async fn events(ws: &mut Ws, names: &[&str]) -> Vec<(String, String, u64)> {
    let mut got = Vec::new();
    for name in names {
        let frame = ws.event(name).await;
        got.push((
            (*name).to_owned(),
            frame["payload"]["id"].as_str().unwrap().to_owned(),
            frame["seq"].as_u64().unwrap(),
        ));
    }
    got
}

const REQUESTED: &str = "exec.approval.requested";
const RESOLVED: &str = "exec.approval.resolved";

#[tokio::test]
async fn an_operator_sees_every_replicas_events_in_one_order_and_catches_up_on_another_replica() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let a = replica(&database).await;
    let b = replica(&database).await;
    let (mut operator_a, hello_a) = a.ws_with(APPROVER, json!({})).await;
    let (mut operator_b, hello_b) = b.ws_with(APPROVER, json!({})).await;
    let instance = hello_a["server"]["instance"].clone();
    assert_eq!(
        instance, hello_b["server"]["instance"],
        "the database's log"
    );

    // Events on B reach the operator on A in B's order, under the same numbers.
    let first = request(&b).await;
    assert_eq!(b.resolve(&first, "deny").await["payload"]["applied"], true);
    let second = request(&b).await;
    let names = [REQUESTED, RESOLVED, REQUESTED];
    let on_b = events(&mut operator_b, &names).await;
    let on_a = events(&mut operator_a, &names).await;
    assert_eq!(on_a, on_b);
    let ids: Vec<&str> = on_a.iter().map(|(_, id, _)| id.as_str()).collect();
    assert_eq!(ids, [first.as_str(), first.as_str(), second.as_str()]);
    let last_seen = on_a[2].2;
    assert_eq!(
        on_a.iter().map(|(_, _, seq)| *seq).collect::<Vec<_>>(),
        [last_seen - 2, last_seen - 1, last_seen]
    );

    // The operator leaves A; meanwhile one is decided on A and another created on B.
    drop(operator_a);
    assert_eq!(
        a.resolve(&second, "allow-once").await["payload"]["applied"],
        true
    );
    let third = request(&b).await;
    let missed = events(&mut operator_b, &[RESOLVED, REQUESTED]).await;
    assert_eq!(missed[0].1, second);
    assert_eq!(missed[1].1, third);

    // It reconnects to B, which holds them in memory, and to C, started since, which reads
    // them from the log: exactly the missed events, in order, and nothing more.
    let c = replica(&database).await;
    for server in [&b, &c] {
        let since = json!({"since": last_seen, "instance": instance});
        let (mut operator, hello) = server.ws_with(APPROVER, since).await;
        assert_eq!(hello["server"]["instance"], instance);
        assert_eq!(hello["events"]["complete"], true, "{hello}");
        assert_eq!(hello["events"]["replayed"], 2, "{hello}");
        assert_eq!(events(&mut operator, &[RESOLVED, REQUESTED]).await, missed);
        let resolved = operator
            .call("exec.approval.get", json!({"id": second}))
            .await;
        assert_eq!(resolved["payload"]["state"], "allowed", "{resolved}");
    }

    // A client holding another run's number (or none) gets what is kept and is told it may
    // not be everything.
    let other = json!({"since": last_seen, "instance": "another-run"});
    let (_, hello) = c.ws_with(APPROVER, other).await;
    assert_eq!(
        hello["events"]["replayed"],
        Value::from(last_seen + 2),
        "{hello}"
    );
}
