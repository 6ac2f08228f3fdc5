//! Slack approvals end to end, in Socket Mode and in HTTP mode: the real `gatehouse serve`
//! against the Slack fake, started in this test process.

use gatehouse_fakes::{Call, FakeHandle};
use serde_json::{Value, json};

use crate::chat_support::{
    Card, WAIT, approval, assert_waits_out_a_429, eventually, request, settled,
};
use crate::gateway::{AGENT, Server};

/// The configured approver.
pub(crate) const APPROVER: &str = "U0ALICE";
/// Someone in the channel who is not an approver.
pub(crate) const STRANGER: &str = "U0MALLORY";
/// The channel requests come from, and a thread in it.
pub(crate) const ORIGIN: &str = "C0OPS";
pub(crate) const THREAD: &str = "1795000000.000100";
/// The signing secret of HTTP mode.
pub(crate) const SIGNING_SECRET: &str = "fake-signing-secret";

/// The fake and a gateway whose `channels.slack` points at it.
pub(crate) struct Slack {
    pub(crate) fake: FakeHandle,
    pub(crate) server: Server,
}

impl Slack {
    /// Socket Mode (`http: false`) or HTTP mode with the fake delivering signed requests.
    pub(crate) async fn start(exec_approvals: &str, http: bool) -> Slack {
        Self::start_with(exec_approvals, http, "").await
    }

    /// As [`Slack::start`], with `extra` top-level config keys (JSON5).
    pub(crate) async fn start_with(exec_approvals: &str, http: bool, extra: &str) -> Slack {
        let fake = gatehouse_fakes::slack::spawn("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let mode = if http {
            format!("mode: 'http', signingSecret: '{SIGNING_SECRET}'")
        } else {
            "appToken: 'xapp-fake'".to_owned()
        };
        let config = format!(
            "channels: {{ slack: {{ botToken: 'xoxb-fake', apiUrl: '{}', {mode},
               execApprovals: {{ {exec_approvals} }} }} }}, {extra}",
            fake.base_url
        );
        let server = Server::start(&config).await;
        if http {
            fake.control(
                "/_fake/config",
                &json!({"request_url": format!("{}/slack/events", server.base),
                    "signing_secret": SIGNING_SECRET}),
            )
            .await
            .unwrap();
        }
        let slack = Slack { fake, server };
        slack.calls("auth.test", 1).await;
        slack
    }

    pub(crate) async fn calls(&self, method: &str, count: usize) -> Vec<Call> {
        self.fake.wait_for_calls(method, count, WAIT).await.unwrap()
    }

    pub(crate) async fn inject(&self, body: Value) -> Value {
        self.fake.control("/_fake/inject", &body).await.unwrap()
    }

    /// Clicks the button with `value` on `card` as `user`; `extra` adds delivery options.
    pub(crate) async fn press(&self, user: &str, card: &Card, value: &str, extra: Value) -> Value {
        let mut body = json!({"type": "interactive", "payload": {"type": "block_actions",
            "user": {"id": user},
            "container": {"type": "message", "message_ts": card.message, "channel_id": card.chat},
            "actions": [{"type": "button", "action_id": "press", "value": value}]}});
        if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
            body.extend(extra.clone());
        }
        self.inject(body).await
    }

    /// `user` writes `text` in their DM with the bot.
    pub(crate) async fn say(&self, user: &str, text: &str) -> Value {
        self.inject(
            json!({"type": "events_api", "payload": {"event": {"type": "message",
            "channel": format!("D{user}"), "channel_type": "im", "user": user, "text": text}}}),
        )
        .await
    }

    /// The cards (messages with buttons) in `channel`; waits for `count`.
    pub(crate) async fn cards(&self, channel: &str, count: usize) -> Vec<Card> {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let stored = self.stored().await;
            let channel = stored["dms"][channel]
                .as_str()
                .unwrap_or(channel)
                .to_owned();
            let cards: Vec<Card> = stored["channels"][&channel]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|message| card(&channel, message))
                .collect();
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

    pub(crate) async fn stored(&self) -> Value {
        reqwest::get(format!("http://{}/_fake/messages", self.fake.addr))
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Ephemeral texts sent to `user`, in order.
    pub(crate) fn ephemerals(&self, user: &str) -> Vec<String> {
        self.fake
            .calls()
            .into_iter()
            .filter(|c| c.method == "chat.postEphemeral" && c.body["user"] == user)
            .map(|c| c.body["text"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

/// A stored message as a card, when it has buttons.
pub(crate) fn card(channel: &str, message: &Value) -> Option<Card> {
    let buttons: Vec<(String, String)> = message["blocks"]
        .as_array()?
        .iter()
        .filter(|block| block["type"] == "actions")
        .flat_map(|block| block["elements"].as_array().cloned().unwrap_or_default())
        .map(|button| {
            let text = |key: &str| button[key].as_str().unwrap_or_default().to_owned();
            (text("action_id"), text("value"))
        })
        .collect();
    (!buttons.is_empty()).then(|| Card {
        chat: channel.to_owned(),
        message: message["ts"].as_str().unwrap_or_default().to_owned(),
        buttons,
    })
}

/// A request from the thread [`THREAD`] of [`ORIGIN`].
pub(crate) fn from_thread() -> Value {
    json!({"turnSource": {"channel": "slack", "to": ORIGIN, "threadId": THREAD}})
}

/// A gateway posting to the origin channel only, one pending request from [`THREAD`], and its
/// card.
pub(crate) async fn one_channel_card(http: bool) -> (Slack, String, Card) {
    let s = Slack::start(
        &format!("approvers: ['{APPROVER}'], target: 'channel'"),
        http,
    )
    .await;
    let id = request(&s.server, from_thread()).await;
    let card = s.cards(ORIGIN, 1).await.remove(0);
    (s, id, card)
}

/// Waits until `user` got `count` ephemeral messages.
pub(crate) async fn wait_for_ephemerals(slack: &Slack, user: &str, count: usize) -> Vec<String> {
    eventually(&format!("{count} ephemerals for {user}"), async || {
        Some(slack.ephemerals(user)).filter(|texts| texts.len() >= count)
    })
    .await
}

pub(crate) async fn delivers_to_dm_channel_and_thread_and_resolves_by_button(http: bool) {
    let s = Slack::start(&format!("approvers: ['{APPROVER}'], target: 'both'"), http).await;
    let id = request(&s.server, from_thread()).await;
    let posted = s.calls("chat.postMessage", 2).await;
    let mut to: Vec<(String, String)> = posted
        .iter()
        .map(|c| {
            let field = |key: &str| c.body[key].as_str().unwrap_or_default().to_owned();
            (field("channel"), field("thread_ts"))
        })
        .collect();
    to.sort();
    // The approver's DM is the conversation `conversations.open` returned.
    let dm = s.stored().await["dms"][APPROVER]
        .as_str()
        .unwrap()
        .to_owned();
    let mut expected = vec![(ORIGIN.to_owned(), THREAD.to_owned()), (dm, String::new())];
    expected.sort();
    assert_eq!(to, expected);
    for call in &posted {
        let body = call.body.to_string();
        assert!(
            body.contains("make deploy") && body.contains(&id[..8]),
            "{body}"
        );
    }

    let card = s.cards(ORIGIN, 1).await.remove(0);
    let stranger = s
        .press(STRANGER, &card, card.button("allow-once"), json!({}))
        .await;
    if http {
        assert_eq!(stranger["result"]["status"], 200, "{stranger}");
    }
    let refused = wait_for_ephemerals(&s, STRANGER, 1).await;
    assert_eq!(refused, ["Only approvers can decide."]);
    assert_eq!(approval(&s.server, &id).await["state"], "pending");

    s.press(APPROVER, &card, card.button("allow-once"), json!({}))
        .await;
    let record = settled(&s.server, &id).await;
    assert_eq!(record["decision"], "allow-once");
    assert!(
        record["resolvedBy"].as_str().unwrap().starts_with("slack:"),
        "{record}"
    );
    let updates = s.calls("chat.update", 2).await;
    for update in &updates {
        let body = update.body.to_string();
        assert!(body.contains("Allowed once"), "{body}");
        assert!(!body.contains("\"actions\""), "buttons stay: {body}");
    }
}

#[tokio::test]
async fn socket_mode_delivers_to_dm_channel_and_thread_and_resolves_by_button() {
    delivers_to_dm_channel_and_thread_and_resolves_by_button(false).await;
}

#[tokio::test]
async fn http_mode_delivers_to_dm_channel_and_thread_and_resolves_by_button() {
    delivers_to_dm_channel_and_thread_and_resolves_by_button(true).await;
}

pub(crate) async fn approves_by_command_bare_word_and_slash_command(http: bool) {
    let s = Slack::start(&format!("approvers: ['{APPROVER}']"), http).await;
    let first = request(&s.server, json!({})).await;
    let second = request(&s.server, json!({})).await;
    let third = request(&s.server, json!({})).await;
    s.calls("chat.postMessage", 3).await;

    s.say(STRANGER, &format!("/approve {first} allow-once"))
        .await;
    s.say(APPROVER, &format!("/approve {first} deny")).await;
    assert_eq!(settled(&s.server, &first).await["decision"], "deny");
    s.say(APPROVER, &format!("approve {} allow-once", &second[..8]))
        .await;
    assert_eq!(settled(&s.server, &second).await["decision"], "allow-once");
    let answered = s
        .inject(
            json!({"type": "slash_commands", "payload": {"command": "/approve",
            "text": format!("{third} deny"), "user_id": APPROVER, "channel_id": ORIGIN}}),
        )
        .await;
    assert_eq!(settled(&s.server, &third).await["decision"], "deny");
    if http {
        assert_eq!(answered["result"]["status"], 200, "{answered}");
    }
    let texts: Vec<String> = s
        .fake
        .calls()
        .into_iter()
        .filter(|c| c.method == "chat.postMessage" || c.method == "chat.postEphemeral")
        .map(|c| c.body.to_string())
        .collect();
    assert!(
        texts.iter().any(|t| t.contains("not an approver")),
        "the stranger was told: {texts:?}"
    );
}

#[tokio::test]
async fn socket_mode_approves_by_command_bare_word_and_slash_command() {
    approves_by_command_bare_word_and_slash_command(false).await;
}

#[tokio::test]
async fn http_mode_approves_by_command_bare_word_and_slash_command() {
    approves_by_command_bare_word_and_slash_command(true).await;
}

#[tokio::test]
async fn http_mode_refuses_bad_stale_and_replayed_signatures() {
    let (s, id, card) = one_channel_card(true).await;
    let deny = card.button("deny").to_owned();
    for variant in [
        json!({"signature": "bad"}),
        json!({"signature": "missing"}),
        json!({"timestamp_offset_secs": -600}),
    ] {
        let refused = s.press(APPROVER, &card, &deny, variant.clone()).await;
        assert_eq!(refused["result"]["status"], 401, "{variant}: {refused}");
    }
    assert_eq!(approval(&s.server, &id).await["state"], "pending");

    // A correctly signed press decides; the same bytes sent again are refused.
    let good = s.press(APPROVER, &card, &deny, json!({})).await;
    assert_eq!(good["result"]["status"], 200, "{good}");
    assert_eq!(settled(&s.server, &id).await["decision"], "deny");
    let replayed = s
        .inject(json!({"replay": good["result"]["delivery_id"]}))
        .await;
    assert_eq!(replayed["result"]["status"], 401, "{replayed}");
}

pub(crate) async fn updates_cards_on_expiry_and_after_a_restart(http: bool) {
    let s = Slack::start(&format!("approvers: ['{APPROVER}']"), http).await;
    let expiring = request(&s.server, json!({"timeoutMs": 1500})).await;
    s.calls("chat.postMessage", 1).await;
    assert_eq!(settled(&s.server, &expiring).await["state"], "expired");
    let updates = s.calls("chat.update", 1).await;
    assert!(
        updates[0].body.to_string().contains("Expired"),
        "{}",
        updates[0].body
    );

    request(&s.server, json!({})).await;
    s.calls("chat.postMessage", 2).await;
    let Slack { fake, server } = s;
    let _server = server.restart().await;
    let updates = fake.wait_for_calls("chat.update", 2, WAIT).await.unwrap();
    assert_ne!(
        updates[1].body["ts"], updates[0].body["ts"],
        "the second card was updated"
    );
    assert!(!updates[1].body.to_string().contains("\"actions\""));
}

#[tokio::test]
async fn socket_mode_updates_cards_on_expiry_and_after_a_restart() {
    updates_cards_on_expiry_and_after_a_restart(false).await;
}

#[tokio::test]
async fn http_mode_updates_cards_on_expiry_and_after_a_restart() {
    updates_cards_on_expiry_and_after_a_restart(true).await;
}

#[tokio::test]
async fn socket_mode_reconnects_without_losing_a_press() {
    let (s, id, card) = one_channel_card(false).await;
    s.fake
        .control("/_fake/disconnect", &json!({"reconnect_delay_ms": 500}))
        .await
        .unwrap();
    let queued = s
        .press(APPROVER, &card, card.button("allow-once"), json!({}))
        .await;
    assert_eq!(
        queued["delivered"], false,
        "pressed while disconnected: {queued}"
    );
    assert_eq!(settled(&s.server, &id).await["decision"], "allow-once");
    let reconnects = s
        .fake
        .calls()
        .iter()
        .filter(|c| c.method == "apps.connections.open")
        .count();
    assert!(reconnects >= 2, "{reconnects} connections opened");
}

pub(crate) async fn waits_out_a_429_and_delivers_once(http: bool) {
    let s = Slack::start(&format!("approvers: ['{APPROVER}']"), http).await;
    assert_waits_out_a_429(&s.fake, &s.server, "chat.postMessage", 1.0).await;
}

#[tokio::test]
async fn socket_mode_waits_out_a_429_and_delivers_once() {
    waits_out_a_429_and_delivers_once(false).await;
}

#[tokio::test]
async fn http_mode_waits_out_a_429_and_delivers_once() {
    waits_out_a_429_and_delivers_once(true).await;
}

pub(crate) async fn deletes_every_copy_after_resolve_with_cleanup(http: bool) {
    let s = Slack::start(
        &format!("approvers: ['{APPROVER}'], target: 'both', cleanupAfterResolve: true"),
        http,
    )
    .await;
    let id = request(&s.server, from_thread()).await;
    s.calls("chat.postMessage", 2).await;
    let card = s.cards(ORIGIN, 1).await.remove(0);
    s.press(APPROVER, &card, card.button("deny"), json!({}))
        .await;
    assert_eq!(settled(&s.server, &id).await["decision"], "deny");
    let deleted = s.calls("chat.delete", 2).await;
    assert!(
        deleted
            .iter()
            .any(|c| c.body["channel"] == ORIGIN && c.body["ts"] == card.message.as_str()),
        "{deleted:?}"
    );
    let dm = s.stored().await["dms"][APPROVER]
        .as_str()
        .unwrap()
        .to_owned();
    let mut from: Vec<&str> = deleted
        .iter()
        .filter_map(|c| c.body["channel"].as_str())
        .collect();
    from.sort_unstable();
    let mut every_copy = [ORIGIN, dm.as_str()];
    every_copy.sort_unstable();
    assert_eq!(from, every_copy, "one delete per copy");
    assert!(s.fake.calls().iter().all(|c| c.method != "chat.update"));
}

#[tokio::test]
async fn socket_mode_deletes_every_copy_after_resolve_with_cleanup() {
    deletes_every_copy_after_resolve_with_cleanup(false).await;
}

#[tokio::test]
async fn http_mode_deletes_every_copy_after_resolve_with_cleanup() {
    deletes_every_copy_after_resolve_with_cleanup(true).await;
}

/// `user` types the slash command `/elevated text` in [`ORIGIN`]; the command's own answer.
pub(crate) async fn elevated(s: &Slack, user: &str, text: &str) -> String {
    slash(s, "/elevated", user, text).await
}

/// `user` types the slash command `command text` in [`ORIGIN`]; the command's own answer.
pub(crate) async fn slash(s: &Slack, command: &str, user: &str, text: &str) -> String {
    let answered = s
        .inject(
            json!({"type": "slash_commands", "payload": {"command": command,
            "text": text, "user_id": user, "channel_id": ORIGIN}}),
        )
        .await;
    assert_eq!(answered["result"]["status"], 200, "{answered}");
    let body: Value =
        serde_json::from_str(answered["result"]["body"].as_str().unwrap_or_default()).unwrap();
    assert_eq!(body["response_type"], "ephemeral", "{body}");
    body["text"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn http_mode_sets_queries_and_refuses_elevated_by_slash_command() {
    let s = Slack::start_with(
        &format!("approvers: ['{APPROVER}']"),
        true,
        &format!(
            "tools: {{ elevated: {{ enabled: true, allowFrom: {{ slack: ['{APPROVER}'] }} }} }},"
        ),
    )
    .await;
    let bind = json!({"sessionKey": "s1", "channel": "slack", "to": ORIGIN});
    assert_eq!(
        s.server.ok(AGENT, "session.bind", bind).await["bound"],
        true
    );

    let refused = elevated(&s, STRANGER, "full").await;
    assert!(
        refused.contains("Not authorized to change elevated mode"),
        "{refused}"
    );
    let set = elevated(&s, APPROVER, "full").await;
    assert!(set.contains("Elevated mode is now full"), "{set}");
    let queried = elevated(&s, APPROVER, "").await;
    assert!(
        queried.contains("Elevated mode is full (set for this session)"),
        "{queried}"
    );
    let refused_query_after = elevated(&s, STRANGER, "off").await;
    assert!(
        refused_query_after.contains("Not authorized"),
        "{refused_query_after}"
    );
    let still = elevated(&s, APPROVER, "").await;
    assert!(
        still.contains("Elevated mode is full"),
        "the stranger changed nothing: {still}"
    );
    // The adapter hands any slash command to the core grammar, so `/elev` works too once the
    // app registers it (the manifest registers only `/approve` and `/elevated`).
    let short = slash(&s, "/elev", APPROVER, "off").await;
    assert!(short.contains("Elevated mode is now off"), "{short}");
}

/// Forwards every TCP connection on `listener` to `to`: the gateway's address as Slack would
/// reach it through a proxy that can be down.
pub(crate) fn forward(listener: tokio::net::TcpListener, to: String) {
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let to = to.clone();
            tokio::spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(&to).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
}

#[tokio::test]
async fn http_mode_accepts_a_retry_of_an_undelivered_press_once() {
    let (s, id, card) = one_channel_card(true).await;
    // The Request URL goes through an address where nothing listens yet: the gateway is down.
    let probe = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = probe.local_addr().unwrap();
    drop(probe);
    s.fake
        .control(
            "/_fake/config",
            &json!({"request_url": format!("http://{proxy}/slack/events"),
                "signing_secret": SIGNING_SECRET}),
        )
        .await
        .unwrap();
    let lost = s
        .press(APPROVER, &card, card.button("allow-once"), json!({}))
        .await;
    assert!(lost["result"]["error"].is_string(), "{lost}");
    assert_eq!(approval(&s.server, &id).await["state"], "pending");

    // Back up: the same bytes, signature and timestamp (as Slack's retry sends them) decide,
    // because the gateway never saw them; a second copy is then a replay.
    let gateway = s.server.base.trim_start_matches("http://").to_owned();
    forward(tokio::net::TcpListener::bind(proxy).await.unwrap(), gateway);
    let delivery = lost["result"]["delivery_id"].clone();
    let retried = s.inject(json!({"replay": delivery})).await;
    assert_eq!(retried["result"]["status"], 200, "{retried}");
    assert_eq!(settled(&s.server, &id).await["decision"], "allow-once");
    let again = s.inject(json!({"replay": delivery})).await;
    assert_eq!(again["result"]["status"], 401, "{again}");
}

/// A fake with `fault` armed before any gateway talks to it, and the `channels.slack` section
/// (Socket Mode, posting to the origin channel) pointing at it.
pub(crate) async fn faulty_fake(fault: Value) -> (FakeHandle, String) {
    let fake = gatehouse_fakes::slack::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    fake.control("/_fake/faults", &fault).await.unwrap();
    let config = format!(
        "channels: {{ slack: {{ botToken: 'xoxb-fake', appToken: 'xapp-fake', apiUrl: '{}',
           execApprovals: {{ approvers: ['{APPROVER}'], target: 'channel' }} }} }},",
        fake.base_url
    );
    (fake, config)
}

/// Runs `gatehouse serve` with `config` to its exit, which a refused start reaches at once.
pub(crate) async fn serve_once(config: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gatehouse.json5");
    std::fs::write(&file, format!("{{ {config} }}")).unwrap();
    let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_gatehouse"))
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&file)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(WAIT, run).await.unwrap().unwrap()
}

/// Operator report: a bot token `auth.test` refused left `serve` running with Slack dead. It
/// now stops the start, as a refused Telegram or Discord token does, naming the cause once.
#[tokio::test]
async fn refuses_to_start_when_auth_test_refuses_the_bot_token() {
    let (_fake, slack) =
        faulty_fake(json!({"method": "auth.test", "status": 200, "description": "invalid_auth"}))
            .await;
    let output = serve_once(&slack).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot connect to Slack"), "{stderr}");
    assert_eq!(stderr.matches("invalid_auth").count(), 1, "{stderr}");
}

/// Operator report: an app token Socket Mode refuses left Slack counted as connected, its
/// listener retrying for ever, and requests waited out their timeout. It now stops the start.
#[tokio::test]
async fn refuses_to_start_when_socket_mode_refuses_the_app_token() {
    let (_fake, slack) = faulty_fake(json!({
        "method": "apps.connections.open", "status": 200, "description": "invalid_auth",
    }))
    .await;
    let output = serve_once(&slack).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("app-level token"), "{stderr}");
    assert!(stderr.contains("invalid_auth"), "{stderr}");
}
