//! Chat delivery under the faults real platforms produce, end to end: the real `gatehouse
//! serve` against the fakes' fault injection (429 and 5xx windows, lost answers, stalls), a
//! burst, and a kill -9 in the middle of a send. Each test checks what the delivery layer
//! promises once the faults end: every pending approval has a card (or a digest) in every
//! approver's chat, no settled approval keeps live buttons, calls stay within the configured
//! rates, and nothing is duplicated but the documented lost-answer case on Telegram.

use std::collections::HashMap;
use std::time::Duration;

use gatehouse_fakes::{Call, FakeHandle, max_calls_within};
use serde_json::{Value, json};

use crate::chat_support::{WAIT, approval, request};
use crate::discord::dm_channel;
use crate::gateway::{APPROVER as APPROVER_TOKEN, Server};

/// The two configured Telegram approvers (user ids, and so their private chats' ids).
const ALICE: i64 = 4242;
const BOB: i64 = 4343;

/// The Telegram fake and a gateway with both approvers, `channel_extra` added to
/// `channels.telegram`.
async fn telegram(channel_extra: &str) -> (FakeHandle, Server) {
    let fake = gatehouse_fakes::telegram::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let config = format!(
        "channels: {{ telegram: {{ botToken: '123:TEST-token', apiUrl: '{}',
           execApprovals: {{ approvers: [{ALICE}, {BOB}] }}, {channel_extra} }} }},",
        fake.base_url
    );
    let server = Server::start(&config).await;
    (fake, server)
}

/// Arms a fault on the fake.
async fn fault(fake: &FakeHandle, spec: Value) {
    fake.control("/_fake/faults", &spec).await.unwrap();
}

/// One Telegram message the bot created: where, and what it said first.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Sent {
    chat: i64,
    message: i64,
    text: String,
    buttons: bool,
}

/// Every message the Telegram fake created, answered or not (a lost answer still created one).
fn created(fake: &FakeHandle) -> Vec<Sent> {
    fake.calls_of("sendMessage")
        .iter()
        .filter(|call| call.answer["ok"] == json!(true))
        .map(|call| Sent {
            chat: call.body["chat_id"].as_i64().unwrap_or_default(),
            message: call.answer["result"]["message_id"]
                .as_i64()
                .unwrap_or_default(),
            text: call.body["text"].as_str().unwrap_or_default().to_owned(),
            buttons: call.body["reply_markup"]["inline_keyboard"]
                .as_array()
                .is_some_and(|rows| !rows.is_empty()),
        })
        .collect()
}

/// The last text each (chat, message) was edited to, by successful `editMessageText` calls.
fn edits(fake: &FakeHandle) -> HashMap<(i64, i64), String> {
    fake.calls_of("editMessageText")
        .iter()
        .filter(|call| call.status == Some(200) && call.answer["ok"] == json!(true))
        .map(|call| {
            (
                (
                    call.body["chat_id"].as_i64().unwrap_or_default(),
                    call.body["message_id"].as_i64().unwrap_or_default(),
                ),
                call.body["text"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// What is still wrong with the cards of `ids` in `chats`: a pending approval without exactly
/// one card (or a digest naming it) per chat, a card of a settled approval not edited, a
/// second card of one approval in one chat. Empty when delivery is true.
async fn card_problems(
    fake: &FakeHandle,
    server: &Server,
    ids: &[String],
    chats: &[i64],
) -> Vec<String> {
    let sent = created(fake);
    let edited = edits(fake);
    let mut problems = Vec::new();
    for id in ids {
        let state = approval(server, id).await["state"].clone();
        for &chat in chats {
            let cards: Vec<&Sent> = sent
                .iter()
                .filter(|s| s.chat == chat && s.buttons && s.text.contains(id.as_str()))
                .collect();
            if cards.len() > 1 {
                problems.push(format!("{id}: {} cards in {chat}", cards.len()));
            }
            if state == "pending" {
                let in_digest = sent.iter().any(|s| {
                    s.chat == chat
                        && !s.buttons
                        && edited
                            .get(&(s.chat, s.message))
                            .unwrap_or(&s.text)
                            .contains(&id[..8])
                });
                if cards.is_empty() && !in_digest {
                    problems.push(format!("{id}: pending without a card in {chat}"));
                }
            } else {
                for card in cards {
                    if !edited.contains_key(&(card.chat, card.message)) {
                        problems.push(format!("{id} ({state}): live card {card:?}"));
                    }
                }
            }
        }
    }
    problems
}

/// Waits until [`card_problems`] finds nothing; fails with what is still wrong.
async fn until_cards_are_true(fake: &FakeHandle, server: &Server, ids: &[String], chats: &[i64]) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let problems = card_problems(fake, server, ids, chats).await;
        if problems.is_empty() {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{problems:#?}\ncalls: {:#?}",
            fake.calls()
                .iter()
                .map(|c| (c.method.clone(), c.chat.clone(), c.status, c.fault))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The bot's calls into `chat` (sends and edits), in order.
fn calls_into(fake: &FakeHandle, chat: i64) -> Vec<Call> {
    fake.calls_in_chat(&chat.to_string())
        .into_iter()
        .filter(|call| call.method == "sendMessage" || call.method == "editMessageText")
        .collect()
}

/// Sends and edits across the bot, in order.
fn message_calls(fake: &FakeHandle) -> Vec<Call> {
    fake.calls()
        .into_iter()
        .filter(|call| call.method == "sendMessage" || call.method == "editMessageText")
        .collect()
}

/// Fails if a call reached `chat` while a 429 answered there still held it.
fn assert_429s_were_waited_out(fake: &FakeHandle, chat: i64) {
    let calls = calls_into(fake, chat);
    for (index, refused) in calls.iter().enumerate() {
        let Some(retry_after) = refused.answer["parameters"]["retry_after"].as_u64() else {
            continue;
        };
        let answered = refused.answered_at_ms.unwrap_or(refused.at_ms);
        let free_at = answered + retry_after * 1000;
        for later in &calls[index + 1..] {
            assert!(
                later.at_ms >= free_at,
                "call {} into {chat} at {} inside the 429 pause until {free_at}",
                later.seq,
                later.at_ms
            );
        }
    }
}

#[tokio::test]
async fn a_429_window_a_5xx_window_and_resets_lose_no_card_and_leave_no_live_buttons() {
    let (fake, server) =
        telegram("delivery: { chatRate: '4/s' }, retry: { minDelayMs: 200, maxDelayMs: 800 }")
            .await;
    for method in ["sendMessage", "editMessageText"] {
        fault(
            &fake,
            json!({"method": method, "for_ms": 2500, "retry_after": "window"}),
        )
        .await;
    }
    let decided_while_queued = request(&server, json!({})).await;
    server.resolve(&decided_while_queued, "deny").await;
    let first = request(&server, json!({})).await;
    let second = request(&server, json!({})).await;
    fake.wait_for_calls("sendMessage", 2, WAIT).await.unwrap();
    tokio::time::sleep(Duration::from_millis(2600)).await;
    for method in ["sendMessage", "editMessageText"] {
        fault(
            &fake,
            json!({"method": method, "for_ms": 2000, "status": 500}),
        )
        .await;
    }
    server.resolve(&first, "allow-once").await;
    let during_500s = request(&server, json!({})).await;
    tokio::time::sleep(Duration::from_millis(2100)).await;
    // Connections cut before the platform did anything.
    fault(
        &fake,
        json!({"method": "sendMessage", "count": 2, "reset": true}),
    )
    .await;
    let after_resets = request(&server, json!({})).await;

    let ids = [
        decided_while_queued.clone(),
        first,
        second,
        during_500s,
        after_resets,
    ];
    until_cards_are_true(&fake, &server, &ids, &[ALICE, BOB]).await;
    assert!(
        created(&fake)
            .iter()
            .all(|sent| !sent.text.contains(&decided_while_queued)),
        "a card of an approval decided while it waited was sent"
    );
    for chat in [ALICE, BOB] {
        let calls = calls_into(&fake, chat);
        assert!(
            max_calls_within(&calls, Duration::from_secs(1)) <= 4,
            "{chat}: {calls:?}"
        );
        assert_429s_were_waited_out(&fake, chat);
    }
    // Every problem the status listed is gone once its message is fixed or dropped.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let status = server.ok(APPROVER_TOKEN, "gateway.status", json!({})).await;
        if status["chat"]["failures"] == json!([]) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{status}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_burst_keeps_the_configured_rates_and_a_digest_stands_for_the_rest() {
    let (fake, server) =
        telegram("delivery: { chatRate: '2/s', botRate: '3/s', digestAfter: 2 }").await;
    let mut ids = Vec::new();
    for _ in 0..8 {
        ids.push(request(&server, json!({})).await);
    }
    until_cards_are_true(&fake, &server, &ids, &[ALICE, BOB]).await;
    for chat in [ALICE, BOB] {
        assert!(
            created(&fake)
                .iter()
                .any(|sent| sent.chat == chat && sent.text.contains("approvals waiting")),
            "no digest in {chat}: {:?}",
            created(&fake)
        );
    }
    for id in &ids {
        server.resolve(id, "deny").await;
    }
    until_cards_are_true(&fake, &server, &ids, &[ALICE, BOB]).await;
    for chat in [ALICE, BOB] {
        let calls = calls_into(&fake, chat);
        assert!(
            max_calls_within(&calls, Duration::from_secs(1)) <= 2,
            "{chat}: {calls:?}"
        );
    }
    let all = message_calls(&fake);
    assert!(
        max_calls_within(&all, Duration::from_secs(1)) <= 3,
        "{all:?}"
    );
}

#[tokio::test]
async fn a_lost_answer_on_telegram_leaves_one_documented_duplicate_and_a_working_card() {
    let (fake, server) = telegram("").await;
    fault(
        &fake,
        json!({"method": "sendMessage", "chat": ALICE, "lose_answer": true}),
    )
    .await;
    let id = request(&server, json!({})).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    while created(&fake).iter().filter(|s| s.chat == ALICE).count() < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{:?}",
            created(&fake)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let in_alice: Vec<Sent> = created(&fake)
        .into_iter()
        .filter(|s| s.chat == ALICE)
        .collect();
    assert_eq!(in_alice.len(), 2, "one orphan and one card: {in_alice:?}");
    server.resolve(&id, "deny").await;
    // The orphan cannot be found on Telegram; the card the gateway knows is edited.
    let deadline = tokio::time::Instant::now() + WAIT;
    while !edits(&fake).contains_key(&(ALICE, in_alice[1].message)) {
        assert!(tokio::time::Instant::now() < deadline, "{:?}", edits(&fake));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!edits(&fake).contains_key(&(ALICE, in_alice[0].message)));
    assert_eq!(
        created(&fake).iter().filter(|s| s.chat == BOB).count(),
        1,
        "only the lost answer duplicates"
    );
}

#[tokio::test]
async fn kill_9_mid_send_on_telegram_edits_the_delivered_cards_and_reports_the_one_in_doubt() {
    let (fake, server) = telegram("").await;
    fault(
        &fake,
        json!({"method": "sendMessage", "chat": BOB, "stall_ms": 60_000}),
    )
    .await;
    let id = request(&server, json!({})).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let sends = fake.calls_of("sendMessage");
        let alice_done = sends
            .iter()
            .any(|c| c.body["chat_id"] == json!(ALICE) && c.status == Some(200));
        let bob_arrived = sends.iter().any(|c| c.body["chat_id"] == json!(BOB));
        if alice_done && bob_arrived {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{sends:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Let the delivered outcome reach the store; Bob's answer is still held back.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let server = server.crash_restart().await;
    assert_eq!(approval(&server, &id).await["state"], "cancelled");
    let alice_card = created(&fake)
        .into_iter()
        .find(|s| s.chat == ALICE)
        .unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        if let Some(text) = edits(&fake).get(&(ALICE, alice_card.message)) {
            assert!(text.contains("gateway-restart"), "{text}");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{:?}", fake.calls());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The send in doubt is reported lost (Telegram cannot find it), until someone looks.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let status = server.ok(APPROVER_TOKEN, "gateway.status", json!({})).await;
        let reported = status["chat"]["failures"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| {
                f["problem"] == "lost"
                    && f["approvalId"] == json!(id)
                    && f["target"]
                        .as_str()
                        .unwrap_or_default()
                        .contains(&BOB.to_string())
            });
        if reported {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{status}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        fake.calls_of("sendMessage")
            .iter()
            .filter(|c| c.body["chat_id"] == json!(BOB))
            .count(),
        1,
        "a cancelled approval's card is not sent again"
    );
}

/// The Discord approvers.
const DISCORD_ALICE: u64 = 5000;
const DISCORD_BOB: u64 = 5001;

/// The Discord fake and a gateway with both approvers, once the bot is connected.
async fn discord() -> (FakeHandle, Server) {
    let fake = gatehouse_fakes::discord::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let config = format!(
        "channels: {{ discord: {{ botToken: 'fake-token', apiUrl: '{}',
           applicationId: '{}', guildIds: ['{}'],
           execApprovals: {{ approvers: ['{DISCORD_ALICE}', '{DISCORD_BOB}'] }} }} }},",
        fake.base_url,
        gatehouse_fakes::discord::APP_ID,
        gatehouse_fakes::discord::GUILD_ID,
    );
    let server = Server::start(&config).await;
    fake.wait_for_calls("gateway.IDENTIFY", 1, WAIT)
        .await
        .unwrap();
    (fake, server)
}

/// The distinct messages created in `channel` (a create repeated under its nonce returns the
/// first message again), from every answer the fake produced, lost or not.
fn discord_messages(fake: &FakeHandle, channel: &str) -> Vec<String> {
    let mut ids: Vec<String> = fake
        .calls_of("createMessage")
        .iter()
        .filter(|call| call.chat.as_deref() == Some(channel))
        .filter_map(Call::sent_message_id)
        .collect();
    ids.dedup();
    ids.sort();
    ids.dedup();
    ids
}

/// Waits until `message` in `channel` was edited into a card without buttons.
async fn until_discord_edited(fake: &FakeHandle, channel: &str, message: &str) {
    let path = format!("/channels/{channel}/messages/{message}");
    let deadline = tokio::time::Instant::now() + WAIT;
    while !fake.calls_of("editMessage").iter().any(|call| {
        call.path == path && call.status == Some(200) && call.body["components"] == json!([])
    }) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{path} not edited: {:?}",
            fake.calls()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_lost_answer_on_discord_creates_no_second_card() {
    let (fake, server) = discord().await;
    let alice = dm_channel(&fake, DISCORD_ALICE).await;
    fault(
        &fake,
        json!({"method": "createMessage", "chat": alice, "lose_answer": true}),
    )
    .await;
    let id = request(&server, json!({})).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    while !fake
        .calls_of("createMessage")
        .iter()
        .any(|c| c.chat.as_deref() == Some(alice.as_str()) && c.status == Some(200))
    {
        assert!(tokio::time::Instant::now() < deadline, "{:?}", fake.calls());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let messages = discord_messages(&fake, &alice);
    assert_eq!(
        messages.len(),
        1,
        "the retry under its nonce found the first: {messages:?}"
    );
    server.resolve(&id, "deny").await;
    until_discord_edited(&fake, &alice, &messages[0]).await;
}

#[tokio::test]
async fn kill_9_mid_send_on_discord_then_restart_leaves_every_card_edited_once() {
    let (fake, server) = discord().await;
    let alice = dm_channel(&fake, DISCORD_ALICE).await;
    let bob = dm_channel(&fake, DISCORD_BOB).await;
    fault(
        &fake,
        json!({"method": "createMessage", "chat": bob, "stall_ms": 60_000}),
    )
    .await;
    let id = request(&server, json!({})).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let creates = fake.calls_of("createMessage");
        let alice_done = creates
            .iter()
            .any(|c| c.chat.as_deref() == Some(alice.as_str()) && c.status == Some(200));
        let bob_arrived = creates
            .iter()
            .any(|c| c.chat.as_deref() == Some(bob.as_str()));
        if alice_done && bob_arrived {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{creates:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let server = server.crash_restart().await;
    assert_eq!(approval(&server, &id).await["state"], "cancelled");
    for channel in [&alice, &bob] {
        let deadline = tokio::time::Instant::now() + WAIT;
        let message = loop {
            if let [only] = discord_messages(&fake, channel).as_slice() {
                break only.clone();
            }
            assert!(tokio::time::Instant::now() < deadline, "{:?}", fake.calls());
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        until_discord_edited(&fake, channel, &message).await;
        assert_eq!(discord_messages(&fake, channel).len(), 1, "{channel}");
    }
}

#[tokio::test]
async fn a_refused_card_stays_in_the_status_after_a_later_success_in_the_same_chat() {
    let (fake, server) = telegram("retry: { maxDelayMs: 60000 }").await;
    fault(
        &fake,
        json!({"method": "sendMessage", "chat": ALICE, "status": 403,
               "description": "Forbidden: bot was blocked by the user"}),
    )
    .await;
    let refused = request(&server, json!({})).await;
    let delivered = request(&server, json!({})).await;
    let ids = [delivered.clone()];
    until_cards_are_true(&fake, &server, &ids, &[ALICE, BOB]).await;
    let status = server.ok(APPROVER_TOKEN, "gateway.status", json!({})).await;
    let failures = status["chat"]["failures"].as_array().unwrap();
    let alice = format!("telegram:user:{ALICE}");
    assert!(
        failures.iter().any(|f| f["approvalId"] == json!(refused)
            && f["target"] == json!(alice)
            && f["problem"] == "undelivered"
            && f["kind"] == "card"
            && f["error"].as_str().unwrap_or_default().contains("blocked")
            && f["retryAtMs"].is_u64()),
        "{status}"
    );
    assert!(
        failures.iter().all(|f| f["approvalId"] != json!(delivered)),
        "{status}"
    );
    // Fixed by its own success only: once decided, it is never sent and leaves the status.
    server.resolve(&refused, "deny").await;
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let status = server.ok(APPROVER_TOKEN, "gateway.status", json!({})).await;
        if status["chat"]["failures"] == json!([]) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{status}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Established TCP connections from any local socket to `port` on 127.0.0.1, from
/// `/proc/net/tcp` (the gateway's side of its connections to a fake on `port`).
fn connections_to(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let remote = format!("0100007F:{port:04X}");
    table
        .lines()
        .skip(1)
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.get(2) == Some(&remote.as_str()) && fields.get(3) == Some(&"01")
        })
        .count()
}

#[tokio::test]
async fn calls_and_connections_to_the_platform_stay_within_max_connections() {
    // Six approvers: six conversations whose workers would all call at once.
    let approvers: Vec<i64> = (0..6).map(|n| 5100 + n).collect();
    let fake = gatehouse_fakes::telegram::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let server = Server::start(&format!(
        "channels: {{ telegram: {{ botToken: '123:TEST-token', apiUrl: '{}',
           execApprovals: {{ approvers: {approvers:?} }},
           delivery: {{ chatRate: 'off', groupRate: 'off', botRate: 'off', digestAfter: 1000,
                        maxConnections: 2 }} }} }},",
        fake.base_url
    ))
    .await;
    let port: u16 = fake
        .base_url
        .rsplit(':')
        .next()
        .and_then(|port| port.trim_end_matches('/').parse().ok())
        .unwrap();
    // Slow answers, so unbounded sends would overlap by the dozen.
    fault(
        &fake,
        json!({"method": "sendMessage", "for_ms": 30_000, "delay_ms": 150}),
    )
    .await;
    let most = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let sampler = {
        let most = std::sync::Arc::clone(&most);
        tokio::spawn(async move {
            loop {
                most.fetch_max(connections_to(port), std::sync::atomic::Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    let mut ids = Vec::new();
    for _ in 0..10 {
        ids.push(request(&server, json!({})).await);
    }
    until_cards_are_true(&fake, &server, &ids, &approvers).await;
    sampler.abort();
    let most = most.load(std::sync::atomic::Ordering::Relaxed);
    // Two for calls, one for the long poll of getUpdates (which the pacer does not count).
    assert!((1..=3).contains(&most), "{most} connections at once");
    let sends = fake.calls_of("sendMessage");
    let overlapping = sends
        .iter()
        .map(|call| {
            sends
                .iter()
                .filter(|other| {
                    other.at_ms <= call.at_ms
                        && other.answered_at_ms.is_none_or(|end| end > call.at_ms)
                })
                .count()
        })
        .max()
        .unwrap_or(0);
    assert!(overlapping <= 2, "{overlapping} sends under way at once");
}

/// The Slack fake and a gateway (Socket Mode) with one approver, once the bot is connected.
async fn slack() -> (FakeHandle, Server) {
    let fake = gatehouse_fakes::slack::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let server = Server::start(&format!(
        "channels: {{ slack: {{ botToken: 'xoxb-fake', appToken: 'xapp-fake', apiUrl: '{}',
           execApprovals: {{ approvers: ['U0ALICE'] }} }} }},",
        fake.base_url
    ))
    .await;
    fake.wait_for_calls("auth.test", 1, WAIT).await.unwrap();
    (fake, server)
}

/// Every message the Slack fake created (answered or not), as (conversation, ts).
fn slack_posts(fake: &FakeHandle) -> Vec<(String, String)> {
    fake.calls_of("chat.postMessage")
        .iter()
        .filter_map(|call| {
            Some((
                call.answer["channel"].as_str()?.to_owned(),
                call.answer["ts"].as_str()?.to_owned(),
            ))
        })
        .collect()
}

/// Waits until the message `ts` in `conversation` was updated into a card without buttons.
async fn until_slack_updated(fake: &FakeHandle, conversation: &str, ts: &str) -> String {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let update = fake.calls_of("chat.update").into_iter().find(|call| {
            call.status == Some(200)
                && call.body["channel"] == json!(conversation)
                && call.body["ts"] == json!(ts)
        });
        if let Some(update) = update {
            return update.body.to_string();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{ts} not updated: {:?}",
            fake.calls()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_lost_answer_on_slack_is_found_in_the_history_instead_of_posted_twice() {
    let (fake, server) = slack().await;
    fault(
        &fake,
        json!({"method": "chat.postMessage", "lose_answer": true}),
    )
    .await;
    let id = request(&server, json!({})).await;
    fake.wait_for_calls("conversations.history", 1, WAIT)
        .await
        .unwrap();
    // Found: the card the lost answer was about is the approval's card; no second post.
    server.resolve(&id, "deny").await;
    let posts = slack_posts(&fake);
    assert_eq!(posts.len(), 1, "{:?}", fake.calls());
    let update = until_slack_updated(&fake, &posts[0].0, &posts[0].1).await;
    assert!(update.contains("Denied"), "{update}");
    assert_eq!(fake.calls_of("chat.postMessage").len(), 1);
}

#[tokio::test]
async fn kill_9_mid_send_on_slack_then_restart_finds_and_edits_the_card() {
    let (fake, server) = slack().await;
    fault(
        &fake,
        json!({"method": "chat.postMessage", "stall_ms": 60_000}),
    )
    .await;
    let id = request(&server, json!({})).await;
    fake.wait_for_calls("chat.postMessage", 1, WAIT)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let server = server.crash_restart().await;
    assert_eq!(approval(&server, &id).await["state"], "cancelled");
    fake.wait_for_calls("conversations.history", 1, WAIT)
        .await
        .unwrap();
    let posts = slack_posts(&fake);
    assert_eq!(posts.len(), 1, "{:?}", fake.calls());
    let update = until_slack_updated(&fake, &posts[0].0, &posts[0].1).await;
    assert!(update.contains("gateway-restart"), "{update}");
    assert_eq!(
        fake.calls_of("chat.postMessage").len(),
        1,
        "not posted again"
    );
}
