//! Discord approvals end to end: the real `gatehouse serve` against the Discord fake, started in
//! this test process.

use gatehouse_fakes::discord::{APP_ID, GUILD_ID};
use gatehouse_fakes::{Call, FakeHandle};
use serde_json::{Value, json};

use crate::chat_support::{
    Card, WAIT, approval, assert_waits_out_a_429, eventually, request, settled,
};
use crate::gateway::Server;

/// The configured approvers.
pub(crate) const APPROVER: u64 = 5000;
pub(crate) const SECOND_APPROVER: u64 = 5001;
/// Someone in the guild who is not an approver.
pub(crate) const STRANGER: u64 = 6000;
/// A guild text channel requests come from.
pub(crate) const ORIGIN: u64 = 4000;
/// The first id the fake hands out; every id it creates is above it.
pub(crate) const FIRST_FAKE_ID: u64 = 1_200_000_000_000_000_000;

/// The fake and a gateway whose `channels.discord` points at it.
pub(crate) struct Discord {
    pub(crate) fake: FakeHandle,
    pub(crate) server: Server,
}

impl Discord {
    pub(crate) async fn start(exec_approvals: &str) -> Discord {
        Self::start_with(exec_approvals, "").await
    }

    /// As [`Discord::start`], with `extra` top-level config keys (JSON5).
    pub(crate) async fn start_with(exec_approvals: &str, extra: &str) -> Discord {
        let fake = gatehouse_fakes::discord::spawn("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let config = format!("{} {extra}", discord_config(&fake, exec_approvals));
        let server = Server::start(&config).await;
        let discord = Discord { fake, server };
        discord.calls("gateway.IDENTIFY", 1).await;
        discord
    }

    /// The first `count` calls of `method`.
    pub(crate) async fn calls(&self, method: &str, count: usize) -> Vec<Call> {
        self.fake.wait_for_calls(method, count, WAIT).await.unwrap()
    }

    pub(crate) async fn inject(&self, t: &str, d: Value) -> Value {
        self.fake
            .control("/_fake/inject", &json!({"t": t, "d": d}))
            .await
            .unwrap()
    }

    /// Clicks `custom_id` on `card` as `user`.
    pub(crate) async fn press(&self, user: u64, card: &Card, custom_id: &str) -> Value {
        self.inject(
            "INTERACTION_CREATE",
            json!({"type": 3, "channel_id": card.chat, "user": {"id": user.to_string()},
                "message": {"id": card.message}, "data": {"custom_id": custom_id}}),
        )
        .await
    }

    /// The DM channel the fake keeps for `user` (the same one the bot was given).
    pub(crate) async fn dm(&self, user: u64) -> String {
        dm_channel(&self.fake, user).await
    }

    /// The bot's cards in `channel`. The fake has no listing route, so this reads its
    /// increasing ids back with `GET …/messages/{id}` until it has `count` with buttons.
    pub(crate) async fn cards(&self, channel: &str, count: usize) -> Vec<Card> {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let mut cards = Vec::new();
            for id in FIRST_FAKE_ID + 1..FIRST_FAKE_ID + 80 {
                let path = format!("/channels/{channel}/messages/{id}");
                let response = self.api(reqwest::Method::GET, &path).send().await.unwrap();
                if !response.status().is_success() {
                    continue;
                }
                let message: Value = response.json().await.unwrap();
                let buttons: Vec<(String, String)> = message["components"][0]["components"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|b| {
                        let text = |key: &str| b[key].as_str().unwrap_or_default().to_owned();
                        (text("label"), text("custom_id"))
                    })
                    .collect();
                if !buttons.is_empty() {
                    cards.push(Card {
                        chat: channel.to_owned(),
                        message: id.to_string(),
                        buttons,
                    });
                }
            }
            if cards.len() >= count {
                return cards;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no {count} cards in {channel}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }

    /// A REST call to the fake as the bot.
    pub(crate) fn api(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        reqwest::Client::new()
            .request(method, format!("{}/api/v10{path}", self.fake.base_url))
            .header("Authorization", "Bot fake-token")
    }
}

/// The DM channel the Discord fake keeps for `user` (the same one the bot was given).
pub(crate) async fn dm_channel(fake: &FakeHandle, user: u64) -> String {
    let opened: Value = reqwest::Client::new()
        .post(format!("{}/api/v10/users/@me/channels", fake.base_url))
        .header("Authorization", "Bot fake-token")
        .json(&json!({"recipient_id": user.to_string()}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    opened["id"].as_str().unwrap().to_owned()
}

pub(crate) fn discord_config(fake: &FakeHandle, exec_approvals: &str) -> String {
    format!(
        "channels: {{ discord: {{ botToken: 'fake-token', apiUrl: '{}',
           applicationId: '{APP_ID}', guildIds: ['{GUILD_ID}'],
           execApprovals: {{ {exec_approvals} }} }} }},",
        fake.base_url
    )
}

/// A request from the guild channel [`ORIGIN`].
pub(crate) fn from_origin() -> Value {
    json!({"turnSource": {"channel": "discord", "to": ORIGIN.to_string()}})
}

/// Ephemeral replies to interactions (follow-ups and edited deferred originals), in order.
pub(crate) fn ephemeral_replies(fake: &FakeHandle) -> Vec<String> {
    fake.calls()
        .into_iter()
        .filter(|c| {
            (c.method == "executeWebhook" && c.body["flags"] == json!(64))
                || c.method == "editWebhookMessage"
        })
        .map(|c| c.body["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Waits until `count` ephemeral replies were sent; all of them.
pub(crate) async fn wait_for_replies(fake: &FakeHandle, count: usize) -> Vec<String> {
    eventually(&format!("{count} ephemeral replies"), async || {
        Some(ephemeral_replies(fake)).filter(|replies| replies.len() >= count)
    })
    .await
}

/// The texts (not cards) the bot posted in `channel`, in order.
pub(crate) fn posted(d: &Discord, channel: &str) -> Vec<String> {
    d.fake
        .calls()
        .into_iter()
        .filter(|c| c.method == "createMessage" && channel_of(c) == channel)
        .filter_map(|c| c.body["content"].as_str().map(str::to_owned))
        .filter(|content| !content.is_empty())
        .collect()
}

/// The channel id a call to `/channels/{id}/…` addressed.
pub(crate) fn channel_of(call: &Call) -> String {
    call.path.split('/').nth(2).unwrap_or_default().to_owned()
}

#[tokio::test]
async fn delivers_to_each_approver_dm_and_the_origin_and_resolves_by_button() {
    let d = Discord::start(&format!(
        "approvers: ['{APPROVER}', 'user:{SECOND_APPROVER}'], target: 'both'"
    ))
    .await;
    let id = request(&d.server, from_origin()).await;
    let sent = d.calls("createMessage", 3).await;
    let mut to: Vec<String> = sent.iter().map(channel_of).collect();
    to.sort();
    let mut expected = vec![
        d.dm(APPROVER).await,
        d.dm(SECOND_APPROVER).await,
        ORIGIN.to_string(),
    ];
    expected.sort();
    assert_eq!(to, expected);
    for call in &sent {
        let body = call.body.to_string();
        assert!(
            body.contains("make deploy") && body.contains(&id[..8]),
            "{body}"
        );
        assert_eq!(call.body["allowed_mentions"]["parse"], json!([]));
    }

    let card = d.cards(&ORIGIN.to_string(), 1).await.remove(0);
    d.press(STRANGER, &card, card.button("Allow once")).await;
    d.press(APPROVER, &card, "g1.AAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAA")
        .await;
    let replies = wait_for_replies(&d.fake, 2).await;
    assert!(
        replies.contains(&"Only approvers can decide.".to_owned()),
        "{replies:?}"
    );
    assert!(
        replies.contains(&"This button is not valid here.".to_owned()),
        "{replies:?}"
    );
    assert_eq!(approval(&d.server, &id).await["state"], "pending");

    d.press(APPROVER, &card, card.button("Allow once")).await;
    let record = settled(&d.server, &id).await;
    assert_eq!(record["decision"], "allow-once");
    assert!(
        record["resolvedBy"]
            .as_str()
            .unwrap()
            .starts_with("discord:"),
        "{record}"
    );
    let edits = d.calls("editMessage", 3).await;
    for edit in &edits {
        assert_eq!(edit.body["components"], json!([]), "{}", edit.body);
        let title = edit.body["embeds"][0]["title"].as_str().unwrap_or_default();
        assert!(title.starts_with("Allowed once by"), "{title}");
    }
}

/// Issue 7: an origin that is itself an approver's DM gets one card, not a card and a copy.
#[tokio::test]
async fn delivers_once_when_the_origin_is_an_approvers_dm() {
    let d = Discord::start(&format!(
        "approvers: ['{APPROVER}', '{SECOND_APPROVER}'], target: 'both'"
    ))
    .await;
    let origin = json!({"turnSource": {"channel": "discord", "to": format!("user:{APPROVER}")}});
    let id = request(&d.server, origin).await;
    let sent = d.calls("createMessage", 2).await;
    // Give a duplicate every chance to show up before counting.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let mut to: Vec<String> = d
        .fake
        .calls()
        .iter()
        .filter(|call| call.method == "createMessage")
        .map(channel_of)
        .collect();
    to.sort();
    let mut expected = vec![d.dm(APPROVER).await, d.dm(SECOND_APPROVER).await];
    expected.sort();
    assert_eq!(to, expected, "{sent:?}");
    // Read as a chat, `user:<id>` would have been a failed delivery to the origin.
    let status = d
        .server
        .ok(crate::gateway::ADMIN, "gateway.status", json!({}))
        .await;
    assert_eq!(status["chat"]["failures"], json!([]), "{status}");
    assert_eq!(approval(&d.server, &id).await["state"], "pending");
}

#[tokio::test]
async fn approves_by_text_and_by_the_application_command() {
    let d = Discord::start(&format!("approvers: ['{APPROVER}']")).await;
    let registered = &d.calls("bulkOverwriteGuildCommands", 1).await[0];
    assert_eq!(
        registered.path,
        format!("/applications/{APP_ID}/guilds/{GUILD_ID}/commands")
    );
    let first = request(&d.server, json!({})).await;
    let second = request(&d.server, json!({})).await;
    d.calls("createMessage", 2).await;
    let dm = d.dm(APPROVER).await;

    d.inject(
        "MESSAGE_CREATE",
        json!({"channel_id": dm, "author": {"id": STRANGER.to_string()},
            "content": format!("/approve {first} allow-once")}),
    )
    .await;
    d.inject(
        "MESSAGE_CREATE",
        json!({"channel_id": dm, "author": {"id": APPROVER.to_string()},
            "content": format!("/approve {first} deny")}),
    )
    .await;
    assert_eq!(settled(&d.server, &first).await["decision"], "deny");

    let options = json!([
        {"name": "id", "type": 3, "value": &second[..8]},
        {"name": "decision", "type": 3, "value": "allow-once"}]);
    d.inject(
        "INTERACTION_CREATE",
        json!({"type": 2, "channel_id": ORIGIN.to_string(), "user": {"id": APPROVER.to_string()},
            "data": {"name": "approve", "type": 1, "options": options}}),
    )
    .await;
    assert_eq!(settled(&d.server, &second).await["decision"], "allow-once");
    let ack = &d.calls("createInteractionResponse", 1).await[0];
    assert_eq!(ack.body["type"], 5, "deferred: {}", ack.body);
    assert_eq!(ack.body["data"]["flags"], 64, "ephemeral: {}", ack.body);
    let reply = wait_for_replies(&d.fake, 1).await.remove(0);
    assert!(reply.starts_with("Allowed once"), "{reply}");

    let texts: Vec<String> = d
        .fake
        .calls()
        .into_iter()
        .filter(|c| c.method == "createMessage" && channel_of(c) == dm)
        .map(|c| c.body.to_string())
        .collect();
    assert!(
        texts.iter().any(|t| t.contains("not an approver")),
        "the stranger was told: {texts:?}"
    );
}

#[tokio::test]
async fn edits_cards_on_expiry_and_after_a_restart() {
    let d = Discord::start(&format!("approvers: ['{APPROVER}']")).await;
    let expiring = request(&d.server, json!({"timeoutMs": 1500})).await;
    d.calls("createMessage", 1).await;
    assert_eq!(settled(&d.server, &expiring).await["state"], "expired");
    let edits = d.calls("editMessage", 1).await;
    let title = edits[0].body["embeds"][0]["title"]
        .as_str()
        .unwrap_or_default();
    assert!(title.contains("Expired"), "{}", edits[0].body);
    assert_eq!(edits[0].body["components"], json!([]));

    request(&d.server, json!({})).await;
    d.calls("createMessage", 2).await;
    let Discord { fake, server } = d;
    let _server = server.restart().await;
    let edits = fake.wait_for_calls("editMessage", 2, WAIT).await.unwrap();
    assert_eq!(edits[1].body["components"], json!([]), "{}", edits[1].body);
    assert_ne!(edits[1].path, edits[0].path, "the second card was edited");
}

#[tokio::test]
async fn deletes_every_card_after_resolve_with_cleanup() {
    let d = Discord::start(&format!(
        "approvers: ['{APPROVER}'], target: 'both', cleanupAfterResolve: true"
    ))
    .await;
    let id = request(&d.server, from_origin()).await;
    d.calls("createMessage", 2).await;
    let card = d.cards(&ORIGIN.to_string(), 1).await.remove(0);
    d.press(APPROVER, &card, card.button("Deny")).await;
    assert_eq!(settled(&d.server, &id).await["decision"], "deny");
    let deleted = d.calls("deleteMessage", 2).await;
    assert!(
        deleted
            .iter()
            .any(|c| c.path == format!("/channels/{ORIGIN}/messages/{}", card.message)),
        "{deleted:?}"
    );
    assert!(d.fake.calls().iter().all(|c| c.method != "editMessage"));
}

#[tokio::test]
async fn resumes_after_a_gateway_drop_without_losing_a_press() {
    let d = Discord::start(&format!("approvers: ['{APPROVER}'], target: 'channel'")).await;
    let id = request(&d.server, from_origin()).await;
    let card = d.cards(&ORIGIN.to_string(), 1).await.remove(0);
    d.fake
        .control(
            "/_fake/disconnect",
            &json!({"code": 4000, "reconnect_delay_ms": 500}),
        )
        .await
        .unwrap();
    let injected = d.press(APPROVER, &card, card.button("Allow once")).await;
    assert_eq!(injected["delivery"], "awaiting-resume");
    assert_eq!(settled(&d.server, &id).await["decision"], "allow-once");
    assert_eq!(d.calls("gateway.RESUME", 1).await.len(), 1);
    assert_eq!(
        d.fake
            .calls()
            .iter()
            .filter(|c| c.method == "gateway.IDENTIFY")
            .count(),
        1,
        "resumed, not re-identified"
    );
}

#[tokio::test]
async fn waits_out_a_429_and_delivers_once() {
    let d = Discord::start(&format!("approvers: ['{APPROVER}']")).await;
    assert_waits_out_a_429(&d.fake, &d.server, "createMessage", 0.6).await;
}
