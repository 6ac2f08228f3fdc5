//! One event sequence over two real `gatehouse serve` replicas on one PostgreSQL database:
//! an operator connected to one sees the other's approval and run events in order, under the
//! numbers every replica gives them, and a client that reconnects to another replica with
//! `since` gets exactly the events it missed, from that replica's memory or, for a replica
//! started since, from the database's log.

use gatehouse_fakes::postgres::TempDatabase;
use serde_json::{Value, json};

use crate::gateway::{AGENT, APPROVER, Server, Ws, config_with_gateway};
use crate::replicas::{replica, request};

const REQUESTED: &str = "exec.approval.requested";
const RESOLVED: &str = "exec.approval.resolved";
const RUNNING: &str = "exec.running";
const FINISHED: &str = "exec.finished";
const DENIED: &str = "exec.denied";

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
    let on_b = frames(&mut operator_b, &names).await;
    let on_a = frames(&mut operator_a, &names).await;
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
    let missed = frames(&mut operator_b, &[RESOLVED, REQUESTED]).await;
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
        assert_eq!(frames(&mut operator, &[RESOLVED, REQUESTED]).await, missed);
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

/// A replica on `database` whose runs need no approval, announcing a run still going after
/// 200 ms with `exec.running`.
async fn running_replica(database: &TempDatabase) -> Server {
    let gateway = format!(
        "store: {{ kind: 'postgres', url: '{}' }}, limits: {{ runningEventAfterMs: 200 }},",
        database.url()
    );
    let policy = "tools: { exec: { security: 'full', ask: 'off' } },";
    Server::start_with_config(&config_with_gateway(&gateway, policy)).await
}

/// Runs `argv` on `server` (with `env`) and returns its answer.
async fn run(server: &Server, argv: &[&str], env: Value) -> Value {
    let params = json!({"argv": argv, "cwd": server.scratch(), "agentId": "main",
                        "sessionKey": "s1", "env": env});
    server.ok(AGENT, "system.run", params).await
}

/// The next events named `names`, in that order, as (event, run or approval id, seq).
async fn frames(ws: &mut Ws, names: &[&str]) -> Vec<(String, String, u64)> {
    let mut got = Vec::new();
    for name in names {
        let frame = ws.event(name).await;
        let payload = &frame["payload"];
        let id = payload["runId"].as_str().or(payload["id"].as_str());
        got.push((
            (*name).to_owned(),
            id.unwrap().to_owned(),
            frame["seq"].as_u64().unwrap(),
        ));
    }
    got
}

#[tokio::test]
async fn an_operator_sees_another_replicas_runs_in_the_shared_order_and_replays_them_anywhere() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let a = running_replica(&database).await;
    let b = running_replica(&database).await;
    let (mut operator_a, hello) = a.ws_with(APPROVER, json!({})).await;
    let instance = hello["server"]["instance"].clone();
    let mut operator_b = b.ws(APPROVER).await;

    // A long run on B, then an approval on A: one order, the same on both replicas.
    // (The run's answer does not wait for its event to be logged: the approval is requested
    // once B has announced `exec.finished`.)
    let long = run(&b, &["sleep", "0.8"], json!({})).await;
    assert_eq!(long["status"], "finished", "{long}");
    let mut on_b = frames(&mut operator_b, &[RUNNING, FINISHED]).await;
    let approval = request(&a).await;
    on_b.extend(frames(&mut operator_b, &[REQUESTED]).await);
    let on_a = frames(&mut operator_a, &[RUNNING, FINISHED, REQUESTED]).await;
    assert_eq!(on_a, on_b);
    let run_id = long["runId"].as_str().unwrap();
    let ids: Vec<&str> = on_a.iter().map(|(_, id, _)| id.as_str()).collect();
    assert_eq!(ids, [run_id, run_id, approval.as_str()]);
    let last_seen = on_a[2].2;
    let seqs: Vec<u64> = on_a.iter().map(|(_, _, seq)| *seq).collect();
    assert_eq!(
        seqs,
        [last_seen - 2, last_seen - 1, last_seen],
        "numbered, no gap"
    );

    // The operator leaves A; meanwhile B runs one command and refuses another. (Another
    // client on A watches, so A is known to have announced them before the operator returns.)
    drop(operator_a);
    let mut watcher_a = a.ws(APPROVER).await;
    let quick = run(&b, &["true"], json!({})).await;
    let refused = run(&b, &["true"], json!({"GITHUB_TOKEN": "x"})).await;
    assert_eq!(refused["reason"], "environment", "{refused}");
    let missed = frames(&mut operator_b, &[FINISHED, DENIED]).await;
    assert_eq!(missed[0].1, quick["runId"].as_str().unwrap());
    assert_eq!(missed[1].1, refused["runId"].as_str().unwrap());
    assert_eq!(missed[0].2, last_seen + 1);
    assert_eq!(frames(&mut watcher_a, &[FINISHED, DENIED]).await, missed);

    // Back on A (which announced them from the log) and on C, started since (which reads them
    // from the log): exactly the missed run events, in order, complete.
    let c = running_replica(&database).await;
    for server in [&a, &c] {
        let since = json!({"since": last_seen, "instance": instance});
        let (mut operator, hello) = server.ws_with(APPROVER, since).await;
        assert_eq!(hello["events"]["complete"], true, "{hello}");
        assert_eq!(hello["events"]["replayed"], 2, "{hello}");
        assert_eq!(frames(&mut operator, &[FINISHED, DENIED]).await, missed);
    }
}

/// A run never waits for the event log: while another session holds the log's counter row
/// the run answers, and its event follows once the row is free. A run event the log refuses is
/// announced by the replica that ran the command, to its own clients only, without a number
/// of its own: replayed there from memory, unknown elsewhere.
#[tokio::test]
async fn a_run_never_waits_for_the_event_log_and_one_it_refuses_is_announced_locally_only() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let a = running_replica(&database).await;
    let b = running_replica(&database).await;
    let (mut operator_b, hello) = b.ws_with(APPROVER, json!({})).await;
    let instance = hello["server"]["instance"].clone();
    let mut watcher_a = a.ws(APPROVER).await;
    let (database_admin, connection) =
        tokio_postgres::connect(database.url(), tokio_postgres::NoTls)
            .await
            .unwrap();
    tokio::spawn(connection);

    // The counter row held elsewhere: B's writer waits, its run does not.
    database_admin
        .batch_execute("BEGIN; SELECT last_seq FROM event_log FOR UPDATE")
        .await
        .unwrap();
    let slow = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        run(&b, &["true"], json!({})),
    )
    .await
    .expect("the run waited for the event log");
    assert_eq!(slow["status"], "finished", "{slow}");
    database_admin.batch_execute("COMMIT").await.unwrap();
    let logged = frames(&mut operator_b, &[FINISHED]).await;
    assert_eq!(logged[0].1, slow["runId"].as_str().unwrap());
    assert_eq!(frames(&mut watcher_a, &[FINISHED]).await, logged);
    let logged_seq = logged[0].2;

    // The log refuses run events now: B announces the next one itself, under the last
    // logged number, and the next approval event takes the next one.
    database_admin
        .batch_execute(
            "ALTER TABLE approval_events ADD CONSTRAINT refuses_runs CHECK (kind <> 'run') \
             NOT VALID",
        )
        .await
        .unwrap();
    let refused = run(&b, &["true"], json!({})).await;
    assert_eq!(refused["status"], "finished", "{refused}");
    let local = frames(&mut operator_b, &[FINISHED]).await;
    assert_eq!(local[0].1, refused["runId"].as_str().unwrap());
    assert_eq!(local[0].2, logged_seq, "no number of its own");
    let approval = request(&b).await;
    let requested = frames(&mut operator_b, &[REQUESTED]).await;
    assert_eq!(requested[0].1, approval);
    assert_eq!(requested[0].2, logged_seq + 1);
    assert_eq!(frames(&mut watcher_a, &[REQUESTED]).await, requested);

    // B, which announced it, replays it from before its number; from its number itself it
    // cannot tell whether the client saw it, and says the replay may not be whole. A never
    // had it: its replay is complete without it.
    let replays = [
        (&b, logged_seq - 1, 3, true),
        (&b, logged_seq, 1, false),
        (&a, logged_seq, 1, true),
    ];
    for (server, since, replayed, complete) in replays {
        let since = json!({"since": since, "instance": instance});
        let (_, hello) = server.ws_with(APPROVER, since).await;
        assert_eq!(hello["events"]["complete"], complete, "{hello}");
        assert_eq!(hello["events"]["replayed"], replayed, "{hello}");
    }
}
