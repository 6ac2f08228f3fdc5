//! What gateways sharing a PostgreSQL database share of chat: the lease on the platforms'
//! connections (one holder at a time, taken over in seconds when the holder's session ends,
//! and given up by a holder whose session was cut), the button tokens of cards sent, and the
//! signed requests already taken.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gatehouse_approvals::{DeliveredMessage, Resolution, SharedChat, StoredButton};
use gatehouse_policy::ApprovalDecision;
use gatehouse_store::approvals_db::{PgApprovalStore, PgOptions};
use proptest::prelude::*;
use tokio::sync::oneshot;

use crate::support::new_approval;

/// Records that approval `id`'s copy was delivered as `message`.
async fn deliver(store: &PgApprovalStore, id: &str, message: DeliveredMessage) {
    let (done, answered) = oneshot::channel();
    gatehouse_approvals::ApprovalStore::record_delivery(
        store,
        id.into(),
        message,
        Box::new(move |result| {
            let _ = done.send(result);
        }),
    );
    answered.await.unwrap().unwrap();
}

async fn store(url: &str) -> Arc<PgApprovalStore> {
    Arc::new(
        PgApprovalStore::connect(url, PgOptions::default())
            .await
            .unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_gateway_holds_a_lease_and_another_takes_it_over_once_it_lets_go() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let (a, b) = (store(database.url()).await, store(database.url()).await);
    assert_eq!(a.lease_holder("chat".into()).await.unwrap(), None);
    let held_by_a = a.acquire_lease("chat".into(), "gw-a".into()).await;
    assert_eq!(
        b.lease_holder("chat".into()).await.unwrap().as_deref(),
        Some("gw-a")
    );
    // Another lease is another lock.
    let other = b.acquire_lease("discord".into(), "gw-b".into());
    tokio::time::timeout(Duration::from_secs(10), other)
        .await
        .expect("another lease is free");
    let waiting = tokio::spawn(b.acquire_lease("chat".into(), "gw-b".into()));
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(!waiting.is_finished(), "held by gw-a");
    let let_go = Instant::now();
    drop(held_by_a);
    let _held_by_b = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("gw-b takes the lease over")
        .unwrap();
    assert!(
        let_go.elapsed() < Duration::from_secs(5),
        "{:?}",
        let_go.elapsed()
    );
    assert_eq!(
        a.lease_holder("chat".into()).await.unwrap().as_deref(),
        Some("gw-b")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_whose_session_is_cut_hears_it_has_lost_the_lease() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let (a, b) = (store(database.url()).await, store(database.url()).await);
    let held = a.acquire_lease("chat".into(), "gw-a".into()).await;
    let (lost, hears) = oneshot::channel();
    tokio::spawn(async move {
        let _ = lost.send(held.lost.await);
    });
    let (client, connection) = tokio_postgres::connect(database.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = 'gatehouse lease gw-a'",
            &[],
        )
        .await
        .unwrap();
    let why = tokio::time::timeout(Duration::from_secs(10), hears)
        .await
        .expect("the holder hears it lost the lease")
        .unwrap();
    assert!(why.contains("connection"), "{why}");
    let taken = b.acquire_lease("chat".into(), "gw-b".into());
    tokio::time::timeout(Duration::from_secs(10), taken)
        .await
        .expect("gw-b takes the lease over");
}

fn button(key: &str, approval_id: &str, delivered_in: Option<DeliveredMessage>) -> StoredButton {
    StoredButton {
        key: key.to_owned(),
        secret: vec![7; 18],
        approval_id: approval_id.to_owned(),
        decision: "allow-once".to_owned(),
        channel: "telegram".to_owned(),
        expires_at_ms: 60_000,
        delivered_in,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buttons_saved_by_one_gateway_are_live_on_another_while_their_approval_is_pending() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let (a, b) = (store(database.url()).await, store(database.url()).await);
    for id in ["a1", "a2"] {
        let (done, answered) = oneshot::channel();
        gatehouse_approvals::ApprovalStore::insert(
            &*a,
            new_approval(id, 1_000),
            Box::new(move |result| {
                let _ = done.send(result);
            }),
        );
        answered.await.unwrap().unwrap();
    }
    let landed = DeliveredMessage {
        channel: "telegram".to_owned(),
        account_id: None,
        chat_id: "4242".to_owned(),
        message_id: "10".to_owned(),
        thread_id: None,
    };
    a.save_button(button("k1", "a1", None)).await.unwrap();
    a.save_button(button("k2", "a2", None)).await.unwrap();
    // Bound to the message it was delivered in: the newer record replaces the first.
    a.save_button(button("k1", "a1", Some(landed.clone())))
        .await
        .unwrap();
    let live = b.live_buttons().await.unwrap();
    assert_eq!(
        live,
        vec![
            button("k1", "a1", Some(landed.clone())),
            button("k2", "a2", None)
        ]
    );
    // One press's lookup on a gateway that keeps no tokens reads its button alone.
    assert_eq!(
        b.live_button("k1".into()).await.unwrap(),
        Some(button("k1", "a1", Some(landed.clone())))
    );
    assert_eq!(b.live_button("k9".into()).await.unwrap(), None);
    // A reply to a card on a gateway that keeps no cards finds its approval while pending.
    let elsewhere = DeliveredMessage {
        message_id: "11".to_owned(),
        ..landed.clone()
    };
    deliver(&a, "a1", landed.clone()).await;
    deliver(&a, "a2", elsewhere.clone()).await;
    let shows = |message: &DeliveredMessage| b.pending_card_approval(message.clone());
    assert_eq!(shows(&landed).await.unwrap().as_deref(), Some("a1"));
    assert_eq!(shows(&elsewhere).await.unwrap().as_deref(), Some("a2"));
    let other_chat = DeliveredMessage {
        chat_id: "7".to_owned(),
        ..landed.clone()
    };
    assert_eq!(shows(&other_chat).await.unwrap(), None);
    let (done, answered) = oneshot::channel();
    let decided = Resolution::Decided {
        decision: ApprovalDecision::Deny,
        resolved_by: Some("alice".into()),
        reason: None,
    };
    gatehouse_approvals::ApprovalStore::resolve(
        &*a,
        "a2".into(),
        decided,
        2_000,
        Box::new(move |result| {
            let _ = done.send(result);
        }),
    );
    answered.await.unwrap().unwrap();
    let live: Vec<String> = b
        .live_buttons()
        .await
        .unwrap()
        .into_iter()
        .map(|button| button.key)
        .collect();
    assert_eq!(live, ["k1"]);
    assert_eq!(b.live_button("k2".into()).await.unwrap(), None, "settled");
    assert_eq!(shows(&elsewhere).await.unwrap(), None, "settled");
    // A button of an approval that does not exist is refused.
    assert!(a.save_button(button("k3", "nobody", None)).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_request_is_first_delivered_at_exactly_one_gateway_until_it_expires() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let (a, b) = (store(database.url()).await, store(database.url()).await);
    let now = 1_795_000_000_000_u64;
    let expires = now + 360_000;
    // Both gateways race for each key many times over: exactly one wins each.
    for round in 0..20 {
        let key = format!("slack:v0=round{round}");
        let tries: Vec<_> = [&a, &b, &a, &b]
            .into_iter()
            .map(|store| {
                let store = Arc::clone(store);
                let key = key.clone();
                tokio::spawn(async move { store.first_delivery(key, expires, now).await })
            })
            .collect();
        let mut firsts = 0;
        for tried in tries {
            firsts += usize::from(tried.await.unwrap().unwrap());
        }
        assert_eq!(firsts, 1, "{key}");
    }
    let key = "slack:v0=once".to_owned();
    assert!(a.first_delivery(key.clone(), expires, now).await.unwrap());
    assert!(
        !b.first_delivery(key.clone(), expires, expires - 1)
            .await
            .unwrap()
    );
    // Once expired, the platform's window refuses the request anyway: the key is free again,
    // and held anew until its new expiry.
    assert!(
        b.first_delivery(key.clone(), expires + 1000, expires)
            .await
            .unwrap()
    );
    assert!(
        !a.first_delivery(key.clone(), expires + 1000, expires + 999)
            .await
            .unwrap()
    );
    // Expired keys are pruned as others are recorded.
    assert!(
        a.first_delivery("slack:v0=later".into(), u64::MAX / 2, expires + 5000)
            .await
            .unwrap()
    );
    let rows = seen_keys(database.url()).await;
    assert_eq!(rows, 1, "only the key still live is kept");
}

/// How many keys the replay memory holds.
async fn seen_keys(url: &str) -> i64 {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .query_one("SELECT count(*) FROM chat_requests_seen", &[])
        .await
        .unwrap()
        .get(0)
}

/// One signed request arriving: at which gateway, which of a few keys, how long after the last.
fn deliveries() -> impl Strategy<Value = Vec<(usize, usize, u64)>> {
    proptest::collection::vec((0..2_usize, 0..3_usize, 0..500_000_u64), 1..24)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Whatever the order and timing of deliveries over two gateways, a request is taken
    /// exactly when no gateway took the same one within its window: the shared memory answers
    /// as one memory of every replica would (a model: key → expiry).
    #[test]
    fn the_shared_replay_memory_answers_as_one_memory_of_every_replica(
        arrivals in deliveries(),
    ) {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let database = gatehouse_fakes::postgres::database().unwrap();
            let gateways = [store(database.url()).await, store(database.url()).await];
            let mut model: HashMap<usize, u64> = HashMap::new();
            let mut now = 1_795_000_000_000_u64;
            for (gateway, key, after) in arrivals {
                now += after;
                let expires = now + 360_000;
                let expected = model.get(&key).is_none_or(|held| *held <= now);
                if expected {
                    model.insert(key, expires);
                }
                let taken = gateways[gateway]
                    .first_delivery(format!("slack:v0=k{key}"), expires, now)
                    .await
                    .unwrap();
                assert_eq!(taken, expected, "key {key} at {now} through gateway {gateway}");
            }
        });
    }
}
