//! Chat on replicas: real `gatehouse serve` processes on one PostgreSQL database and the
//! Telegram fake. Exactly one holds the chat lease and polls Telegram; approvals requested on
//! another are carded by it; when it is killed with SIGKILL, another takes over within
//! seconds, honours a press on a card sent before the kill (made while nobody polled), edits
//! the cards of decided and expired approvals, and sends no card twice. A card whose send was
//! under way at the kill is sent by the next holder at once (on Discord under its nonce and on
//! Slack after a lookup by its metadata, so once); a holder whose lease connection is cut stops
//! rather than poll beside the next one.
//!
//! Each replica gets its own bot token only so the fake's log, which records each call's path
//! with the token's bot id, says which replica made it.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use gatehouse_fakes::postgres::TempDatabase;
use gatehouse_fakes::{Call, FakeHandle};
use serde_json::{Value, json};

use crate::chat_support::{eventually, request, settled};
use crate::gateway::{ADMIN, AGENT, Server, config_with_gateway};
use crate::telegram::{APPROVER, WAIT, button, buttons, replies_to};

const REPLICAS: usize = 3;

/// Replica `index` on `database`, its Telegram pointed at `fake`.
async fn replica(database: &TempDatabase, fake: &FakeHandle, index: usize) -> Server {
    replica_with(database, fake, index, "").await
}

/// [`replica`] with `extra` config keys.
async fn replica_with(
    database: &TempDatabase,
    fake: &FakeHandle,
    index: usize,
    extra: &str,
) -> Server {
    let store = store_on(database);
    let chat = format!(
        "channels: {{ telegram: {{ botToken: '{}', apiUrl: '{}',
           execApprovals: {{ approvers: [{APPROVER}] }} }} }}, {extra}",
        token(index),
        fake.base_url
    );
    Server::start_with_config(&config_with_gateway(&store, &chat)).await
}

/// The `gateway.store` keys of a replica on `database`.
fn store_on(database: &TempDatabase) -> String {
    format!("store: {{ kind: 'postgres', url: '{}' }},", database.url())
}

fn token(index: usize) -> String {
    format!("12{index}:TEST-token")
}

/// How the fake logs a call made with `token(index)`.
fn logged_as(index: usize) -> String {
    format!("/bot12{index}:")
}

/// The replicas whose token made `calls` (those after `since`, by sequence number).
fn callers(calls: &[Call], since: u64) -> BTreeSet<usize> {
    calls
        .iter()
        .filter(|call| call.seq > since)
        .filter_map(|call| (0..REPLICAS).find(|&i| call.path.starts_with(&logged_as(i))))
        .collect()
}

/// Waits until some replica other than `not` polls after call `since`; which one.
async fn poller(fake: &FakeHandle, since: u64, not: Option<usize>) -> usize {
    eventually("a replica polling Telegram", async || {
        let polling = callers(&fake.calls_of("getUpdates"), since);
        polling.into_iter().find(|&index| Some(index) != not)
    })
    .await
}

/// The chat lease's holder as `server`'s `gateway.status` names it.
async fn lease_holder(server: &Server) -> Value {
    let status = server.ok(ADMIN, "gateway.status", json!({})).await;
    status["chat"]["lease"]["holder"].clone()
}

/// Every live replica's `gateway.status` names `holder` as the chat lease's holder.
async fn assert_every_status_names(replicas: &[Option<Server>], holder: &Server) {
    let suffix = format!(":{}", port(holder));
    for server in replicas.iter().flatten() {
        let named = lease_holder(server).await;
        assert!(named.as_str().unwrap_or("").ends_with(&suffix), "{named}");
    }
}

fn port(server: &Server) -> String {
    server.base.rsplit(':').next().unwrap().to_owned()
}

/// The cards sent for approval `id` (a card carries buttons).
fn cards_of(fake: &FakeHandle, id: &str) -> Vec<Call> {
    fake.calls_of("sendMessage")
        .into_iter()
        .filter(|call| call.body["text"].as_str().unwrap_or("").contains(&id[..8]))
        .filter(|call| !buttons(call).is_empty())
        .collect()
}

/// The approver presses the button labelled `label` on `card`.
async fn press(fake: &FakeHandle, card: &Call, label: &str) {
    let message_id: i64 = card.sent_message_id().unwrap().parse().unwrap();
    let update = json!({"callback_query": {
        "from": {"id": APPROVER, "is_bot": false, "first_name": "Alice", "username": "alice"},
        "data": button(&buttons(card), label),
        "message": {"message_id": message_id, "chat": {"id": APPROVER}},
    }});
    fake.control("/_fake/inject", &update).await.unwrap();
}

async fn card_of(fake: &FakeHandle, id: &str) -> Call {
    eventually("a card", async || cards_of(fake, id).into_iter().next()).await
}

/// Waits until the message `message_id` was edited; the edit.
async fn edit_of(fake: &FakeHandle, message_id: &str) -> Call {
    let message_id: i64 = message_id.parse().unwrap();
    eventually("the card's edit", async || {
        fake.calls_of("editMessageText")
            .into_iter()
            .find(|call| call.body["message_id"] == json!(message_id) && call.status == Some(200))
    })
    .await
}

#[tokio::test]
async fn killing_the_replica_that_holds_telegram_hands_chat_over_with_no_card_twice_and_no_press_lost()
 {
    let (_database, fake, mut replicas) = cluster(REPLICAS).await;
    // Exactly one replica polls, and every replica's status names it.
    let holder = poller(&fake, 0, None).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        callers(&fake.calls_of("getUpdates"), 0),
        BTreeSet::from([holder]),
        "only the lease holder polls"
    );
    assert_every_status_names(&replicas, replicas[holder].as_ref().unwrap()).await;

    // Two approvals requested on a replica that does not hold the lease are carded by the one
    // that does.
    let requester = (holder + 1) % REPLICAS;
    let on = replicas[requester].as_ref().unwrap();
    let pressed = request(on, json!({})).await;
    let expiring = request(on, json!({"timeoutMs": 15_000})).await;
    let pressed_card = card_of(&fake, &pressed).await;
    let expiring_card = card_of(&fake, &expiring).await;
    assert!(pressed_card.path.starts_with(&logged_as(holder)));
    assert_eq!(pressed_card.body["chat_id"], json!(APPROVER));
    // Its buttons' tokens are recorded before the send is claimed; let the binding to the
    // message land too.
    tokio::time::sleep(Duration::from_secs(1)).await;

    // SIGKILL (kill_on_drop), as a crash: no goodbye to the database.
    let last_call = fake.calls().last().map_or(0, |call| call.seq);
    let killed_at = Instant::now();
    drop(replicas[holder].take());
    // A press made while nobody polls waits at the platform.
    press(&fake, &pressed_card, "Allow once").await;
    let message_id = pressed_card.sent_message_id().unwrap();

    let successor = poller(&fake, last_call, Some(holder)).await;
    let failover = killed_at.elapsed();
    eprintln!("chat failover after SIGKILL of the lease holder: {failover:?}");
    assert!(failover < Duration::from_secs(20), "{failover:?}");
    let survivor = replicas[successor].as_ref().unwrap();

    // The press on the card sent before the kill decides the approval, and the card is edited.
    let record = settled(survivor, &pressed).await;
    assert_eq!(record["state"], "allowed", "{record}");
    assert_eq!(record["resolvedBy"], "telegram:4242 (@alice)");
    let receipt = edit_of(&fake, &message_id).await;
    assert!(receipt.path.starts_with(&logged_as(successor)));
    // The expiring approval expires on time and its card is edited by the new holder.
    let record = settled(survivor, &expiring).await;
    assert_eq!(record["state"], "expired", "{record}");
    let expired = edit_of(&fake, &expiring_card.sent_message_id().unwrap()).await;
    assert!(
        expired.body["text"].as_str().unwrap().contains("Expired"),
        "{}",
        expired.body
    );

    // No card was sent twice, and since the successor's first poll only it polls.
    assert_eq!(cards_of(&fake, &pressed).len(), 1);
    assert_eq!(cards_of(&fake, &expiring).len(), 1);
    let first_poll = fake
        .calls_of("getUpdates")
        .into_iter()
        .find(|call| call.seq > last_call && call.path.starts_with(&logged_as(successor)))
        .map_or(0, |call| call.seq);
    assert_eq!(
        callers(&fake.calls_of("getUpdates"), first_poll - 1),
        BTreeSet::from([successor])
    );
    assert_every_status_names(&replicas, survivor).await;
}

/// Replicas on a fresh database and a fresh fake; `count` of them.
async fn cluster(count: usize) -> (TempDatabase, FakeHandle, Vec<Option<Server>>) {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let fake = gatehouse_fakes::telegram::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let mut replicas = Vec::new();
    for index in 0..count {
        replicas.push(Some(replica(&database, &fake, index).await));
    }
    (database, fake, replicas)
}

/// The send was under way (Telegram took the message, its answer held back) when the holder
/// died. The next holder finds the attempt claimed in the lease's name and sends again at once
/// rather than wait out the claim: Telegram offers no way to find the first message, so the
/// approval shows two cards, never none (docs/chat.md, "What can still duplicate"); a press on
/// the new card decides it.
#[tokio::test]
async fn a_card_in_flight_when_its_holder_dies_is_sent_again_by_the_next_holder_at_once() {
    let (_database, fake, mut replicas) = cluster(2).await;
    let holder = poller(&fake, 0, None).await;
    let stall = json!({"method": "sendMessage", "chat": APPROVER, "stall_ms": 60_000});
    fake.control("/_fake/faults", &stall).await.unwrap();
    let other = 1 - holder;
    let id = request(replicas[other].as_ref().unwrap(), json!({})).await;
    eventually("the stalled send", async || {
        fake.calls_of("sendMessage").into_iter().find(|call| {
            call.path.starts_with(&logged_as(holder))
                && call.body["text"].as_str().unwrap_or("").contains(&id[..8])
        })
    })
    .await;
    // Let the claim reach the store; the answer is still held back.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let killed_at = Instant::now();
    drop(replicas[holder].take());

    let resent = eventually("the card sent again", async || {
        fake.calls_of("sendMessage").into_iter().find(|call| {
            call.path.starts_with(&logged_as(other))
                && call.status == Some(200)
                && !buttons(call).is_empty()
        })
    })
    .await;
    eprintln!(
        "card in flight sent again {:?} after SIGKILL",
        killed_at.elapsed()
    );
    assert!(killed_at.elapsed() < Duration::from_secs(30));
    assert_eq!(
        cards_of(&fake, &id).len(),
        2,
        "the first, held back, and the new one"
    );
    let survivor = replicas[other].as_ref().unwrap();
    press(&fake, &resent, "Deny").await;
    let record = settled(survivor, &id).await;
    assert_eq!(record["state"], "denied", "{record}");
}

/// The database ends the holder's lease session (as a database restart or a network cut
/// would): the holder stops, and the other replica takes chat over.
#[tokio::test]
async fn a_holder_whose_lease_connection_is_cut_stops_and_another_takes_chat_over() {
    let (database, fake, replicas) = cluster(2).await;
    let holder = poller(&fake, 0, None).await;
    let holder_server = replicas[holder].as_ref().unwrap();
    let before = fake.calls().last().map_or(0, |call| call.seq);
    let (client, connection) = tokio_postgres::connect(database.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let holder_name = format!("gatehouse lease %:{}", port(holder_server));
    let cut = client
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE $1",
            &[&holder_name],
        )
        .await
        .unwrap();
    assert_eq!(cut.len(), 1, "one lease session");

    let successor = poller(&fake, before, Some(holder)).await;
    assert_eq!(successor, 1 - holder);
    let base = holder_server.base.clone();
    eventually("the old holder to stop", async || {
        let answer = reqwest::Client::new().get(&base).send().await;
        answer.is_err().then_some(())
    })
    .await;
    // The old holder has stopped: only the survivor answers.
    let survivor = replicas[successor].as_ref().unwrap();
    assert_every_status_names(std::slice::from_ref(&replicas[successor]), survivor).await;
    // `doctor`'s live check names the holder too.
    let successor_port = port(survivor);
    let mut doctor = std::process::Command::new(env!("CARGO_BIN_EXE_gatehouse"));
    doctor
        .arg("doctor")
        .arg("--config")
        .arg(survivor.dir.path().join("gatehouse.json5"))
        .arg("--data-dir")
        .arg(survivor.data())
        .args(["--url", &survivor.base, "--token", ADMIN])
        .env_remove("GATEHOUSE_CONFIG")
        .env_remove("GATEHOUSE_TOKEN")
        .env_remove("GATEHOUSE_URL");
    let ran = tokio::task::spawn_blocking(move || doctor.output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&ran.stdout);
    let line = format!(":{successor_port}\n");
    assert!(
        stdout.contains("\nchat lease: held by ") && stdout.contains(&line),
        "{stdout}"
    );
}

/// Discord, whose gateway only the holder connects to: the send under way at the kill is
/// repeated by the next holder under the same nonce, and Discord answers with the message the
/// first attempt created — one card, edited when the approval is decided on any replica.
#[tokio::test]
async fn on_discord_a_card_in_flight_when_its_holder_dies_is_delivered_once_and_edited() {
    const ALICE: u64 = 5000;
    let database = gatehouse_fakes::postgres::database().unwrap();
    let fake = gatehouse_fakes::discord::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let store = store_on(&database);
    let chat = crate::discord::discord_config(&fake, &format!("approvers: ['{ALICE}']"));
    let config = config_with_gateway(&store, &chat);
    let mut replicas = [
        Some(Server::start_with_config(&config).await),
        Some(Server::start_with_config(&config).await),
    ];
    fake.wait_for_calls("gateway.IDENTIFY", 1, WAIT)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        fake.calls_of("gateway.IDENTIFY").len(),
        1,
        "only the holder connects"
    );
    let holder = holder_of(&replicas).await;
    let other = 1 - holder;

    let dm = crate::discord::dm_channel(&fake, ALICE).await;
    let stall = json!({"method": "createMessage", "chat": dm, "stall_ms": 60_000});
    fake.control("/_fake/faults", &stall).await.unwrap();
    let id = request(replicas[other].as_ref().unwrap(), json!({})).await;
    fake.wait_for_calls("createMessage", 1, WAIT).await.unwrap();
    // Let the claim reach the store; the answer is still held back.
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(replicas[holder].take());

    fake.wait_for_calls("gateway.IDENTIFY", 2, WAIT)
        .await
        .unwrap();
    let resent = eventually("the send repeated under its nonce", async || {
        fake.calls_of("createMessage")
            .into_iter()
            .find(|call| call.chat.as_deref() == Some(dm.as_str()) && call.status == Some(200))
    })
    .await;
    let messages: BTreeSet<String> = fake
        .calls_of("createMessage")
        .iter()
        .filter_map(Call::sent_message_id)
        .collect();
    let card = resent.sent_message_id().unwrap();
    assert_eq!(messages, BTreeSet::from([card.clone()]), "one card");

    let survivor = replicas[other].as_ref().unwrap();
    let answer = survivor.resolve(&id, "deny").await;
    assert_eq!(answer["payload"]["applied"], true, "{answer}");
    let path = format!("/channels/{dm}/messages/{card}");
    eventually("the card's edit", async || {
        fake.calls_of("editMessage")
            .into_iter()
            .find(|call| call.path == path && call.status == Some(200))
    })
    .await;
}

/// Which of `replicas` holds the chat lease, as the first live one's status names it.
async fn holder_of(replicas: &[Option<Server>]) -> usize {
    let asked = replicas.iter().flatten().next().unwrap();
    let named = eventually("a lease holder", async || {
        lease_holder(asked).await.as_str().map(str::to_owned)
    })
    .await;
    replicas
        .iter()
        .position(|server| {
            server
                .as_ref()
                .is_some_and(|server| named.ends_with(&format!(":{}", port(server))))
        })
        .unwrap()
}

/// Slack (Socket Mode): the post under way at the kill is looked up by the next holder in the
/// conversation's history by its key (message metadata) and found, not posted again; deciding
/// the approval on any replica edits it.
#[tokio::test]
async fn on_slack_a_card_in_flight_when_its_holder_dies_is_found_not_posted_twice() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let fake = gatehouse_fakes::slack::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let store = store_on(&database);
    let chat = format!(
        "channels: {{ slack: {{ botToken: 'xoxb-fake', appToken: 'xapp-fake', apiUrl: '{}',
           execApprovals: {{ approvers: ['U0ALICE'] }} }} }},",
        fake.base_url
    );
    let config = config_with_gateway(&store, &chat);
    let mut replicas = [
        Some(Server::start_with_config(&config).await),
        Some(Server::start_with_config(&config).await),
    ];
    let holder = holder_of(&replicas).await;
    let other = 1 - holder;
    let stall = json!({"method": "chat.postMessage", "stall_ms": 60_000});
    fake.control("/_fake/faults", &stall).await.unwrap();
    let id = request(replicas[other].as_ref().unwrap(), json!({})).await;
    fake.wait_for_calls("chat.postMessage", 1, WAIT)
        .await
        .unwrap();
    // Let the claim reach the store; the answer is still held back.
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(replicas[holder].take());

    fake.wait_for_calls("conversations.history", 1, WAIT)
        .await
        .unwrap();
    let survivor = replicas[other].as_ref().unwrap();
    let answer = survivor.resolve(&id, "deny").await;
    assert_eq!(answer["payload"]["applied"], true, "{answer}");
    let posts: Vec<(String, String)> = fake
        .calls_of("chat.postMessage")
        .iter()
        .filter_map(|call| {
            Some((
                call.answer["channel"].as_str()?.to_owned(),
                call.answer["ts"].as_str()?.to_owned(),
            ))
        })
        .collect();
    assert_eq!(
        posts.len(),
        1,
        "found, not posted again: {:?}",
        fake.calls()
    );
    let (conversation, ts) = &posts[0];
    let update = eventually("the card's update", async || {
        fake.calls_of("chat.update").into_iter().find(|call| {
            call.status == Some(200)
                && call.body["channel"] == json!(conversation)
                && call.body["ts"] == json!(ts)
        })
    })
    .await;
    assert!(
        update.body.to_string().contains("Denied"),
        "{}",
        update.body
    );
}

/// `system.run` of `echo <word>` in session `session` on `server`: its status and stdout.
async fn run_echo(server: &Server, word: &str, session: &str) -> (Value, Value) {
    let params = json!({"argv": ["echo", word], "cwd": server.scratch(), "agentId": "main",
                        "sessionKey": session});
    let answer = server.ok(AGENT, "system.run", params).await;
    (answer["status"].clone(), answer["stdout"].clone())
}

/// `/elevated` typed in Telegram reaches the replica holding the chat lease, which finds the
/// session an agent host bound through another replica, and the level it stores applies to
/// that session's exec on every replica (the sessions document is the database's).
#[tokio::test]
async fn an_elevated_level_typed_in_chat_applies_to_the_session_on_every_replica() {
    let gates = format!(
        "tools: {{ elevated: {{ enabled: true, allowFrom: {{ telegram: ['{APPROVER}'] }} }},
           exec: {{ security: 'deny' }} }},"
    );
    let database = gatehouse_fakes::postgres::database().unwrap();
    let fake = gatehouse_fakes::telegram::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let mut replicas = Vec::new();
    for index in 0..2 {
        replicas.push(replica_with(&database, &fake, index, &gates).await);
    }
    let holder = poller(&fake, 0, None).await;
    let other = &replicas[1 - holder];

    // The agent host binds its session to the approver's private chat through the replica that
    // does not hold chat; exec in that session is denied there.
    let bind =
        json!({"sessionKey": "s-e", "channel": "telegram", "to": format!("user:{APPROVER}")});
    other.ok(AGENT, "session.bind", bind).await;
    assert_eq!(run_echo(other, "no", "s-e").await.0, json!("denied"));

    let before = replies_to(&fake, APPROVER).len();
    let typed = json!({"message": {
        "from": {"id": APPROVER, "is_bot": false, "first_name": "Alice", "username": "alice"},
        "chat": {"id": APPROVER, "type": "private"},
        "text": "/elevated full",
    }});
    fake.control("/_fake/inject", &typed).await.unwrap();
    let reply = eventually("the reply", async || {
        replies_to(&fake, APPROVER).get(before).cloned()
    })
    .await;
    assert!(
        reply.contains("Elevated mode is now full") && reply.contains("Session: s-e."),
        "{reply}"
    );

    for server in &replicas {
        let deadline = Instant::now() + WAIT;
        loop {
            let (status, stdout) = run_echo(server, "yes", "s-e").await;
            if status == json!("finished") {
                assert_eq!(stdout, json!("yes\n"));
                break;
            }
            assert!(Instant::now() < deadline, "never elevated: {status}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Two replicas on one database with Slack in HTTP mode against one fake (`extra` config
/// added), and which of them holds the chat lease.
async fn slack_http_replicas(
    extra: &str,
) -> (TempDatabase, FakeHandle, [Option<Server>; 2], usize) {
    use crate::slack::{APPROVER, SIGNING_SECRET};
    let database = gatehouse_fakes::postgres::database().unwrap();
    let fake = gatehouse_fakes::slack::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let store = store_on(&database);
    let chat = format!(
        "channels: {{ slack: {{ botToken: 'xoxb-fake', apiUrl: '{}', mode: 'http',
           signingSecret: '{SIGNING_SECRET}', execApprovals: {{ approvers: ['{APPROVER}'] }} }} }},
         {extra}",
        fake.base_url
    );
    let config = config_with_gateway(&store, &chat);
    let replicas = [
        Some(Server::start_with_config(&config).await),
        Some(Server::start_with_config(&config).await),
    ];
    let holder = holder_of(&replicas).await;
    (database, fake, replicas, holder)
}

/// Slack in HTTP mode behind a load balancer that routes a button press to the replica not
/// holding the chat lease: the press decides the approval there (its token read from the
/// shared store), Slack gets its 200 at once (no error shown) and the presser the answer, and
/// the holder edits the card, once. A press with a forged signature at that replica is refused
/// and decides nothing; an event there is taken too (the replicas share their memory of
/// events against replays).
#[tokio::test]
async fn on_slack_http_a_press_at_the_replica_without_the_lease_decides_and_the_holder_edits_once()
{
    use crate::slack::{APPROVER, Slack};
    let (_database, fake, mut replicas, holder) = slack_http_replicas("").await;
    let other = replicas[1 - holder].take().unwrap();
    route_slack_to(&fake, &other).await;
    let s = Slack {
        fake,
        server: other,
    };
    let id = request(&s.server, json!({})).await;
    let card = s.cards(APPROVER, 1).await.remove(0);
    // The card's binding to its message reaches the store just after the post.
    tokio::time::sleep(Duration::from_secs(1)).await;

    let forged = s
        .press(
            APPROVER,
            &card,
            card.button("deny"),
            json!({"signature": "bad"}),
        )
        .await;
    assert_eq!(forged["result"]["status"], 401, "{forged}");
    let event = s.say(APPROVER, "hello").await;
    assert_eq!(event["result"]["status"], 200, "{event}");
    assert_eq!(
        crate::chat_support::approval(&s.server, &id).await["state"],
        "pending"
    );

    let pressed = s
        .press(APPROVER, &card, card.button("deny"), json!({}))
        .await;
    assert_eq!(pressed["result"]["status"], 200, "{pressed}");
    let record = settled(&s.server, &id).await;
    assert_eq!(record["decision"], "deny", "{record}");
    assert_eq!(
        record["resolvedBy"],
        format!("slack:{APPROVER} (@u0alice)"),
        "{record}"
    );
    let answer = eventually("the presser's answer", async || {
        s.ephemerals(APPROVER).into_iter().next()
    })
    .await;
    assert!(
        answer.contains("Denied") || answer.contains("deny"),
        "{answer}"
    );

    let edited = |fake: &FakeHandle| -> Vec<Call> {
        fake.calls_of("chat.update")
            .into_iter()
            .filter(|call| call.status == Some(200) && call.body["ts"] == json!(card.message))
            .collect()
    };
    let update = eventually("the card's update", async || {
        edited(&s.fake).into_iter().next()
    })
    .await;
    assert!(
        update.body.to_string().contains("Denied"),
        "{}",
        update.body
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(edited(&s.fake).len(), 1, "edited once");
    drop(replicas);
}

/// `user` types `/elevated text` in [`crate::slack::ORIGIN`], delivered to the fake's Request
/// URL: Slack's answer to the request, with its delivery id for replays.
async fn elevated_command(fake: &FakeHandle, user: &str, text: &str) -> Value {
    let typed = json!({"type": "slash_commands", "payload": {"command": "/elevated",
        "text": text, "user_id": user, "channel_id": crate::slack::ORIGIN}});
    fake.control("/_fake/inject", &typed).await.unwrap()["result"].clone()
}

/// The ephemeral text a slash command's answer carries.
fn answer_text(answer: &Value) -> String {
    assert_eq!(answer["status"], 200, "{answer}");
    let body: Value = serde_json::from_str(answer["body"].as_str().unwrap_or_default()).unwrap();
    body["text"].as_str().unwrap_or_default().to_owned()
}

/// Points the fake's Request URL at `server`, as a load balancer would route the next request.
async fn route_slack_to(fake: &FakeHandle, server: &Server) {
    fake.control(
        "/_fake/config",
        &json!({"request_url": format!("{}/slack/events", server.base),
            "signing_secret": crate::slack::SIGNING_SECRET}),
    )
    .await
    .unwrap();
}

/// Slack in HTTP mode: a slash command reaching the replica without the chat lease is taken
/// and acts there as at the holder (an approver's `/elevated full` sets the level, answered in
/// the command's response). The replicas share their memory of signed requests, so the same
/// request captured and replayed to the holder is refused as a replay, as is one the holder
/// took replayed to the other; a forged signature is still refused, and with the memory gone
/// every replica answers 503.
#[tokio::test]
async fn on_slack_http_a_command_at_the_replica_without_the_lease_acts_once_across_replicas() {
    use crate::slack::{APPROVER, ORIGIN};
    let gates = format!(
        "tools: {{ elevated: {{ enabled: true, allowFrom: {{ slack: ['{APPROVER}'] }} }} }},"
    );
    let (database, fake, replicas, holding) = slack_http_replicas(&gates).await;
    let holder = replicas[holding].as_ref().unwrap();
    let other = replicas[1 - holding].as_ref().unwrap();
    let bind = json!({"sessionKey": "s-slack", "channel": "slack", "to": ORIGIN});
    assert_eq!(other.ok(AGENT, "session.bind", bind).await["bound"], true);
    let url = |server: &Server| format!("{}/slack/events", server.base);

    // Taken at the replica without the lease: it waits for `auth.test` before taking anything.
    route_slack_to(&fake, other).await;
    let set = eventually("the command taken", async || {
        let answer = elevated_command(&fake, APPROVER, "full").await;
        (answer["status"] != 503).then_some(answer)
    })
    .await;
    let text = answer_text(&set);
    assert!(text.contains("Elevated mode is now full"), "{text}");
    // The owner turns it off at the holder.
    route_slack_to(&fake, holder).await;
    let off = elevated_command(&fake, APPROVER, "off").await;
    let text = answer_text(&off);
    assert!(text.contains("Elevated mode is now off"), "{text}");

    // A captured `/elevated full` replayed to either replica, and the holder's `off` replayed
    // to the other, are refused as replays.
    for (delivery, to) in [(&set, url(holder)), (&set, url(other)), (&off, url(other))] {
        let replayed = fake
            .control(
                "/_fake/inject",
                &json!({"replay": delivery["delivery_id"], "replay_to": to}),
            )
            .await
            .unwrap();
        assert_eq!(replayed["result"]["status"], 401, "{to}: {replayed}");
    }
    route_slack_to(&fake, other).await;
    let queried = answer_text(&elevated_command(&fake, APPROVER, "").await);
    assert!(
        queried.contains("Elevated mode is off"),
        "the replays changed nothing: {queried}"
    );

    let forged = fake
        .control(
            "/_fake/inject",
            &json!({"type": "slash_commands", "signature": "bad", "payload": {
                "command": "/elevated", "text": "full", "user_id": APPROVER,
                "channel_id": ORIGIN}}),
        )
        .await
        .unwrap();
    assert_eq!(forged["result"]["status"], 401, "{forged}");

    // A replay memory that cannot be read refuses the request rather than take it unchecked.
    let (admin, connection) = tokio_postgres::connect(database.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    admin
        .batch_execute("DROP TABLE chat_requests_seen")
        .await
        .unwrap();
    for server in [other, holder] {
        route_slack_to(&fake, server).await;
        let unchecked = elevated_command(&fake, APPROVER, "full").await;
        assert_eq!(unchecked["status"], 503, "{unchecked}");
    }
    drop(replicas);
}

/// Telegram's hosted webhook behind a load balancer that routes updates to the replica not
/// holding the chat lease: the holder registered the webhook and sent the card; a press
/// delivered to the other replica decides the approval there and is answered by it, and the
/// holder edits the card once. A request with a wrong secret at that replica is refused, a
/// stranger's press there is not answered, and a decision typed as a reply to a card there
/// finds the card's approval.
#[tokio::test]
async fn on_telegram_a_webhook_press_at_the_replica_without_the_lease_decides_and_the_holder_edits_once()
 {
    use crate::telegram::WEBHOOK_SECRET;
    let database = gatehouse_fakes::postgres::database().unwrap();
    let fake = gatehouse_fakes::telegram::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    // The load balancer's address, the webhook URL every replica registers.
    let balancer = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/telegram/webhook", balancer.local_addr().unwrap());
    let store = store_on(&database);
    let mut replicas = Vec::new();
    for index in 0..2 {
        let chat = format!(
            "channels: {{ telegram: {{ botToken: '{}', apiUrl: '{}', webhookUrl: '{hook}',
               webhookSecret: '{WEBHOOK_SECRET}', execApprovals: {{ approvers: [{APPROVER}] }} }} }},",
            token(index),
            fake.base_url
        );
        let config = config_with_gateway(&store, &chat);
        replicas.push(Some(Server::start_with_config(&config).await));
    }
    let holder = holder_of(&replicas).await;
    let other = 1 - holder;
    let registered = fake.wait_for_calls("setWebhook", 1, WAIT).await.unwrap();
    assert!(registered[0].path.starts_with(&logged_as(holder)));
    let other_server = replicas[other].as_ref().unwrap();
    crate::slack::forward(
        balancer,
        other_server.base.trim_start_matches("http://").to_owned(),
    );

    let id = request(other_server, json!({})).await;
    let card = card_of(&fake, &id).await;
    assert!(card.path.starts_with(&logged_as(holder)));
    tokio::time::sleep(Duration::from_secs(1)).await;

    let message_id = card.sent_message_id().unwrap();
    let forged = json!({"update_id": 900, "callback_query": {"id": "900", "chat_instance": "1",
        "from": {"id": APPROVER, "is_bot": false, "first_name": "Alice", "username": "alice"},
        "data": button(&buttons(&card), "Allow once"),
        "message": {"message_id": message_id.parse::<i64>().unwrap(), "date": 0,
                    "chat": {"id": APPROVER, "type": "private"}}}});
    let refused = reqwest::Client::new()
        .post(format!("{}/telegram/webhook", other_server.base))
        .header(gatehouse_telegram::SECRET_HEADER, "wrong-secret")
        .json(&forged)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(refused, reqwest::StatusCode::UNAUTHORIZED);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        crate::chat_support::approval(other_server, &id).await["state"],
        "pending"
    );

    // Someone who may not decide presses first: that replica keeps no stranger-reply windows
    // (the holder does), so it answers nothing rather than answer its own share of a flood.
    let stranger = json!({"callback_query": {
        "from": {"id": 7, "is_bot": false, "first_name": "Mallory"},
        "data": button(&buttons(&card), "Allow once"),
        "message": {"message_id": message_id.parse::<i64>().unwrap(), "chat": {"id": APPROVER}},
    }});
    fake.control("/_fake/inject", &stranger).await.unwrap();
    press(&fake, &card, "Allow once").await;
    let record = settled(other_server, &id).await;
    assert_eq!(record["state"], "allowed", "{record}");
    assert_eq!(record["resolvedBy"], "telegram:4242 (@alice)");
    let answered = eventually("the press's answer", async || {
        fake.calls_of("answerCallbackQuery").into_iter().next()
    })
    .await;
    assert!(
        answered.path.starts_with(&logged_as(other)),
        "{}",
        answered.path
    );
    let receipt = edit_of(&fake, &message_id).await;
    assert!(receipt.path.starts_with(&logged_as(holder)));
    tokio::time::sleep(Duration::from_secs(1)).await;
    let edits = fake
        .calls_of("editMessageText")
        .into_iter()
        .filter(|call| call.body["message_id"] == json!(message_id.parse::<i64>().unwrap()))
        .count();
    assert_eq!(edits, 1, "edited once");
    let answers = fake.calls_of("answerCallbackQuery");
    assert_eq!(answers.len(), 1, "the approver's answer only: {answers:?}");

    // A bare "deny" typed as a reply to a card reaches the same replica, which keeps no cards:
    // it finds the card's approval in the shared store and decides it.
    let replied = request(other_server, json!({})).await;
    let second = card_of(&fake, &replied).await;
    let second_id: i64 = second.sent_message_id().unwrap().parse().unwrap();
    let reply = json!({"message": {
        "from": {"id": APPROVER, "is_bot": false, "first_name": "Alice", "username": "alice"},
        "chat": {"id": APPROVER, "type": "private"},
        "text": "deny",
        "reply_to_message": {"message_id": second_id, "date": 0,
                             "chat": {"id": APPROVER, "type": "private"}, "text": "card"},
    }});
    fake.control("/_fake/inject", &reply).await.unwrap();
    let record = settled(other_server, &replied).await;
    assert_eq!(record["state"], "denied", "{record}");
    assert!(
        callers(&fake.calls_of("getUpdates"), 0).is_empty(),
        "no polling in webhook mode"
    );
}
