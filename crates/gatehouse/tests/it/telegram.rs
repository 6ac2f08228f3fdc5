//! Telegram approvals end to end: the real `gatehouse serve` against the Telegram fake, started
//! in this test process.

use std::time::Duration;

use gatehouse_fakes::{Call, FakeHandle};
use serde_json::{Value, json};

use crate::gateway::{ADMIN, AGENT, APPROVER as APPROVER_TOKEN, OTHER_AGENT, Server};

/// The configured approver's Telegram user id (and so their private chat's id).
pub(crate) const APPROVER: i64 = 4242;
/// Someone in the chat who is not an approver.
pub(crate) const STRANGER: i64 = 777;
/// A forum supergroup a request can come from.
pub(crate) const FORUM: i64 = -1_001_234_567_890;
/// How long to wait for the gateway to call the fake.
pub(crate) const WAIT: Duration = Duration::from_secs(20);

/// The fake and a gateway whose `channels.telegram` points at it, with `extra` config keys.
pub(crate) struct Telegram {
    pub(crate) fake: FakeHandle,
    pub(crate) server: Server,
}

impl Telegram {
    pub(crate) async fn start(exec_approvals: &str, extra: &str) -> Telegram {
        let fake = gatehouse_fakes::telegram::spawn("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let server = Server::start(&telegram_config(&fake, exec_approvals, extra)).await;
        Telegram { fake, server }
    }

    /// A pending approval for `make deploy`, created with `twoPhase` and `extra` params; its id.
    pub(crate) async fn request(&self, extra: Value) -> String {
        let mut params = json!({
            "command": "make deploy",
            "argv": ["make", "deploy"],
            "cwd": self.server.scratch(),
            "agentId": "main",
            "sessionKey": "s1",
            "twoPhase": true,
        });
        if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
            params.extend(extra.clone());
        }
        let accepted = self.server.ok(AGENT, "exec.approval.request", params).await;
        assert_eq!(accepted["status"], "accepted", "{accepted}");
        accepted["id"].as_str().unwrap().to_owned()
    }

    /// The stored approval.
    pub(crate) async fn approval(&self, id: &str) -> Value {
        self.server
            .ok(APPROVER_TOKEN, "exec.approval.get", json!({"id": id}))
            .await
    }

    /// Waits for the approval to leave `pending`; its record.
    pub(crate) async fn settled(&self, id: &str) -> Value {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let record = self.approval(id).await;
            if record["state"] != "pending" {
                return record;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "still pending: {record}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The first `count` calls of `method`.
    pub(crate) async fn calls(&self, method: &str, count: usize) -> Vec<Call> {
        self.fake.wait_for_calls(method, count, WAIT).await.unwrap()
    }

    /// Presses the button carrying `data` on message `message_id` of `chat`, as `from`.
    pub(crate) async fn press(&self, from: i64, chat: i64, message_id: i64, data: &str) {
        self.inject(json!({"callback_query": {
            "from": {"id": from, "is_bot": false, "first_name": "Alice", "username": "alice"},
            "data": data,
            "message": {"message_id": message_id, "chat": {"id": chat}},
        }}))
        .await;
    }

    /// Sends `text` to the bot in `from`'s private chat.
    pub(crate) async fn say(&self, from: i64, text: &str) {
        self.inject(json!({"message": {
            "from": {"id": from, "is_bot": false, "first_name": "Alice", "username": "alice"},
            "chat": {"id": from, "type": "private"},
            "text": text,
        }}))
        .await;
    }

    /// Sends `text` to the bot in the group `group`, as `from`.
    pub(crate) async fn in_group(&self, group: i64, from: i64, text: &str) {
        self.inject(json!({"message": {
            "from": {"id": from, "is_bot": false, "first_name": "Someone"},
            "chat": {"id": group, "type": "group", "title": "ops"},
            "text": text,
        }}))
        .await;
    }

    pub(crate) async fn inject(&self, update: Value) {
        self.fake.control("/_fake/inject", &update).await.unwrap();
    }
}

pub(crate) fn telegram_config(fake: &FakeHandle, exec_approvals: &str, extra: &str) -> String {
    format!(
        "channels: {{ telegram: {{ botToken: '123:TEST-token', apiUrl: '{}',
           execApprovals: {{ {exec_approvals} }} }} }},
         {extra}",
        fake.base_url
    )
}

/// The callback data of each button of a sent card, by button text.
pub(crate) fn buttons(call: &Call) -> Vec<(String, String)> {
    call.body["reply_markup"]["inline_keyboard"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|row| row.as_array().cloned().unwrap_or_default())
        .map(|button| {
            (
                button["text"].as_str().unwrap_or_default().to_owned(),
                button["callback_data"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect()
}

pub(crate) fn button<'a>(buttons: &'a [(String, String)], label: &str) -> &'a str {
    &buttons
        .iter()
        .find(|(text, _)| text.contains(label))
        .unwrap_or_else(|| panic!("no {label:?} button in {buttons:?}"))
        .1
}

pub(crate) fn answers(fake: &FakeHandle) -> Vec<String> {
    fake.calls()
        .into_iter()
        .filter(|call| call.method == "answerCallbackQuery")
        .map(|call| call.body["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn delivers_a_card_to_the_approver_dm_and_resolves_by_button() {
    let t = Telegram::start(&format!("approvers: [{APPROVER}]"), "").await;
    let id = t.request(json!({})).await;
    let sent = t.calls("sendMessage", 1).await;
    assert_eq!(sent[0].body["chat_id"], json!(APPROVER));
    let text = sent[0].body["text"].as_str().unwrap();
    assert!(text.contains("make deploy"), "{text}");
    assert!(text.contains(&id[..8]), "{text}");
    let buttons = buttons(&sent[0]);
    assert_eq!(
        buttons.len(),
        2,
        "allow-always is not offered here: {buttons:?}"
    );

    t.press(STRANGER, APPROVER, 1, button(&buttons, "Allow once"))
        .await;
    t.calls("answerCallbackQuery", 1).await;
    assert_eq!(answers(&t.fake), ["Only approvers can decide."]);
    assert_eq!(t.approval(&id).await["state"], "pending");

    t.press(APPROVER, APPROVER, 1, button(&buttons, "Allow once"))
        .await;
    let record = t.settled(&id).await;
    assert_eq!(record["state"], "allowed");
    assert_eq!(record["decision"], "allow-once");
    assert_eq!(record["resolvedBy"], "telegram:4242 (@alice)");
    let edits = t.calls("editMessageText", 1).await;
    assert_eq!(edits[0].body["chat_id"], json!(APPROVER));
    assert_eq!(edits[0].body["message_id"], json!(1));
    let receipt = edits[0].body["text"].as_str().unwrap();
    assert!(receipt.contains("by telegram:4242 (@alice)"), "{receipt}");
    assert!(
        edits[0].body["reply_markup"]["inline_keyboard"]
            .as_array()
            .is_none_or(Vec::is_empty)
    );
}

#[tokio::test]
async fn refuses_forged_misplaced_and_replayed_callback_data() {
    let t = Telegram::start(&format!("approvers: [{APPROVER}]"), "").await;
    let id = t.request(json!({})).await;
    let sent = t.calls("sendMessage", 1).await;
    let buttons = buttons(&sent[0]);
    let forged = "g1.AAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAA";
    t.press(APPROVER, APPROVER, 1, forged).await;
    t.calls("answerCallbackQuery", 1).await;
    // The right token on a message it was not delivered in.
    t.say(APPROVER, "hello").await;
    t.press(APPROVER, APPROVER, 2, button(&buttons, "Deny"))
        .await;
    t.calls("answerCallbackQuery", 2).await;
    assert_eq!(t.approval(&id).await["state"], "pending");
    t.press(APPROVER, APPROVER, 1, button(&buttons, "Allow once"))
        .await;
    t.settled(&id).await;
    // Replaying the other decision after the fact changes nothing.
    t.press(APPROVER, APPROVER, 1, button(&buttons, "Deny"))
        .await;
    t.calls("answerCallbackQuery", 4).await;
    let answers = answers(&t.fake);
    assert_eq!(answers[0], "This button is not valid here.");
    assert_eq!(answers[1], "This button is not valid here.");
    assert!(answers[2].starts_with("Allowed once"), "{answers:?}");
    assert!(answers[3].contains("was already decided"), "{answers:?}");
    assert_eq!(t.approval(&id).await["decision"], "allow-once");
}

#[tokio::test]
async fn approves_by_slash_command_with_full_id_and_prefix_and_refuses_non_approvers() {
    let t = Telegram::start(&format!("approvers: [{APPROVER}]"), "").await;
    let first = t.request(json!({})).await;
    let second = t.request(json!({})).await;
    t.calls("sendMessage", 2).await;
    t.say(STRANGER, &format!("/approve {first} allow-once"))
        .await;
    t.say(APPROVER, &format!("/approve {first} deny")).await;
    t.say(
        APPROVER,
        &format!("/approve@gatehouse_fake_bot Allow-Once {}", &second[..8]),
    )
    .await;
    assert_eq!(t.settled(&first).await["decision"], "deny");
    assert_eq!(t.settled(&second).await["decision"], "allow-once");
    let replies: Vec<String> = t
        .calls("sendMessage", 5)
        .await
        .iter()
        .skip(2)
        .map(|call| call.body["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(
        replies.iter().any(|text| text.contains("not an approver")),
        "{replies:?}"
    );
}

#[tokio::test]
async fn keeps_the_forum_topic_for_channel_cards() {
    let t = Telegram::start(&format!("approvers: [{APPROVER}], target: 'channel'"), "").await;
    let turn =
        json!({"turnSource": {"channel": "telegram", "to": FORUM.to_string(), "threadId": "42"}});
    t.request(turn).await;
    let sent = t.calls("sendMessage", 1).await;
    assert_eq!(sent[0].body["chat_id"], json!(FORUM));
    assert_eq!(sent[0].body["message_thread_id"], json!(42));
    // The request's turnSource bound its session to the topic: `/elevated` there reaches the
    // gates (closed here) instead of "no session bound".
    t.inject(json!({"message": {
        "from": {"id": APPROVER, "is_bot": false, "first_name": "Alice", "username": "alice"},
        "chat": {"id": FORUM, "type": "supergroup", "is_forum": true},
        "message_thread_id": 42,
        "is_topic_message": true,
        "text": "/elevated full",
    }}))
    .await;
    let replies = wait_replies(&t.fake, FORUM, 2).await;
    assert!(
        replies[1].contains("Not authorized to change elevated mode"),
        "{replies:?}"
    );
    let sent = t.calls("sendMessage", 2).await;
    assert_eq!(sent[1].body["message_thread_id"], json!(42));
}

#[tokio::test]
async fn posts_the_route_notice_and_the_fallback_when_no_dm_arrives() {
    let t = Telegram::start(&format!("approvers: [{APPROVER}]"), "").await;
    let turn = json!({"turnSource": {"channel": "telegram", "to": FORUM.to_string()}});
    t.request(turn.clone()).await;
    let sent = t.calls("sendMessage", 2).await;
    let to_forum: Vec<&Call> = sent
        .iter()
        .filter(|c| c.body["chat_id"] == json!(FORUM))
        .collect();
    assert_eq!(to_forum.len(), 1);
    assert!(
        to_forum[0].body["text"]
            .as_str()
            .unwrap()
            .contains("approvers' DMs"),
        "{}",
        to_forum[0].body
    );
    // An approver who never opened a chat with the bot: Telegram refuses the DM.
    t.fake
        .control("/_fake/config", &json!({"never_started": [APPROVER]}))
        .await
        .unwrap();
    let id = t.request(turn).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    let fallback = loop {
        let found = t.fake.calls().into_iter().find(|call| {
            call.method == "sendMessage"
                && call.body["chat_id"] == json!(FORUM)
                && call.body["text"]
                    .as_str()
                    .is_some_and(|text| text.contains(&format!("/approve {}", &id[..8])))
        });
        if let Some(found) = found {
            break found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no fallback: {:?}",
            t.fake.calls()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(fallback.body["chat_id"], json!(FORUM));
    let status = t
        .server
        .ok(APPROVER_TOKEN, "gateway.status", json!({}))
        .await;
    assert_eq!(status["chat"]["channels"], json!(["telegram"]));
    assert_eq!(status["chat"]["failures"][0]["channel"], "telegram");
    assert_eq!(status["chat"]["failures"][0]["operation"], "send");
}

#[tokio::test]
async fn edits_every_card_on_expiry_and_after_a_restart() {
    let t = Telegram::start(&format!("approvers: [{APPROVER}]"), "").await;
    let expiring = t.request(json!({"timeoutMs": 1500})).await;
    t.calls("sendMessage", 1).await;
    assert_eq!(t.settled(&expiring).await["state"], "expired");
    let edits = t.calls("editMessageText", 1).await;
    assert!(
        edits[0].body["text"].as_str().unwrap().contains("Expired"),
        "{}",
        edits[0].body
    );

    let pending = t.request(json!({})).await;
    t.calls("sendMessage", 2).await;
    let Telegram { fake, server } = t;
    let server = server.restart().await;
    let edits = fake
        .wait_for_calls("editMessageText", 2, WAIT)
        .await
        .unwrap();
    assert_eq!(edits[1].body["message_id"], json!(2));
    let text = edits[1].body["text"].as_str().unwrap();
    assert!(text.contains("Cancelled: gateway-restart"), "{text}");
    let record = server
        .ok(APPROVER_TOKEN, "exec.approval.get", json!({"id": pending}))
        .await;
    assert_eq!(record["state"], "cancelled");
}

#[tokio::test]
async fn survives_429_and_a_flapping_api_without_losing_or_duplicating_a_prompt() {
    let t = Telegram::start(&format!("approvers: [{APPROVER}]"), "").await;
    t.fake
        .control(
            "/_fake/faults",
            &json!({"method": "sendMessage", "count": 1, "status": 429, "retry_after": 1}),
        )
        .await
        .unwrap();
    let id = t.request(json!({})).await;
    t.calls("sendMessage", 2).await;
    t.fake
        .control(
            "/_fake/faults",
            &json!({"method": "sendMessage", "count": 2, "status": 502}),
        )
        .await
        .unwrap();
    let second = t.request(json!({})).await;
    t.calls("sendMessage", 5).await;
    // Quiet for longer than the retry backoff: nothing more is sent.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let sent: Vec<Call> = t
        .fake
        .calls()
        .into_iter()
        .filter(|call| call.method == "sendMessage")
        .collect();
    assert_eq!(sent.len(), 5, "{sent:?}");
    // Each approval has exactly one card: messages 1 and 2 of the approver's chat.
    let buttons_first = buttons(&sent[1]);
    let buttons_second = buttons(&sent[4]);
    t.press(APPROVER, APPROVER, 1, button(&buttons_first, "Deny"))
        .await;
    t.press(APPROVER, APPROVER, 2, button(&buttons_second, "Allow once"))
        .await;
    assert_eq!(t.settled(&id).await["decision"], "deny");
    assert_eq!(t.settled(&second).await["decision"], "allow-once");
}

/// The text of every reply the bot sent to `chat` after the first `skip` messages.
pub(crate) fn replies_to(fake: &FakeHandle, chat: i64) -> Vec<String> {
    fake.calls()
        .into_iter()
        .filter(|call| call.method == "sendMessage" && call.body["chat_id"] == json!(chat))
        .map(|call| call.body["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Waits until the bot sent `count` messages to `chat`; their texts.
pub(crate) async fn wait_replies(fake: &FakeHandle, chat: i64, count: usize) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let replies = replies_to(fake, chat);
        if replies.len() >= count {
            return replies;
        }
        assert!(tokio::time::Instant::now() < deadline, "{replies:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn sets_queries_and_refuses_elevated_and_applies_it_to_the_next_system_run() {
    let t = Telegram::start(
        &format!("approvers: [{APPROVER}]"),
        "tools: { elevated: { enabled: true, allowFrom: { telegram: ['4242', 'username:bob'] } } },",
    )
    .await;
    t.say(APPROVER, "/elevated full").await;
    let first = wait_replies(&t.fake, APPROVER, 1).await;
    assert!(first[0].contains("No agent session is bound"), "{first:?}");

    let bind = json!({"sessionKey": "s1", "channel": "telegram", "to": APPROVER.to_string()});
    assert_eq!(
        t.server.ok(AGENT, "session.bind", bind).await["bound"],
        true
    );
    // Someone not in allowFrom is refused; a `username:` entry admits its user.
    let in_bound_chat = |from: i64, username: &str, text: &str| {
        json!({"message": {
            "from": {"id": from, "is_bot": false, "first_name": "Someone", "username": username},
            "chat": {"id": APPROVER, "type": "private"},
            "text": text,
        }})
    };
    t.inject(in_bound_chat(STRANGER, "mallory", "/elevated full"))
        .await;
    let refused = wait_replies(&t.fake, APPROVER, 2).await;
    assert!(
        refused[1].contains("Not authorized to change elevated mode"),
        "{refused:?}"
    );
    t.inject(in_bound_chat(555, "bob", "/elev yes")).await;
    let set = wait_replies(&t.fake, APPROVER, 3).await;
    assert!(set[2].contains("Elevated mode is now on"), "{set:?}");
    t.say(APPROVER, "/elevated").await;
    let replies = wait_replies(&t.fake, APPROVER, 4).await;
    assert!(
        replies[3].contains("Elevated mode is on (set for this session)"),
        "{replies:?}"
    );

    t.say(APPROVER, "/elevated full").await;
    wait_replies(&t.fake, APPROVER, 5).await;
    let run = json!({"argv": ["echo", "elevated"], "cwd": t.server.scratch(), "agentId": "main", "sessionKey": "s1"});
    let answer = t.server.ok(AGENT, "system.run", run.clone()).await;
    assert_eq!(answer["status"], "finished", "{answer}");
    assert_eq!(answer["stdout"], "elevated\n");

    t.say(APPROVER, "/elevated off").await;
    wait_replies(&t.fake, APPROVER, 6).await;
    let answer = t.server.ok(AGENT, "system.run", run).await;
    assert_eq!(answer["status"], "denied", "{answer}");
    let check = json!({"argv": ["echo", "x"], "cwd": t.server.scratch(), "agentId": "main"});
    let without_session = t.server.ok(AGENT, "exec.policy.check", check.clone()).await;
    let mut with_session = check;
    with_session["sessionKey"] = json!("s1");
    let with_session = t.server.ok(AGENT, "exec.policy.check", with_session).await;
    assert_ne!(without_session, with_session);
    assert_eq!(with_session["decision"], "deny", "{with_session}");

    // Agent hosts that own the chat use the RPC, with the same gates.
    let directive = |id: &str, text: &str| json!({"text": text, "sessionKey": "s1", "sender": {"channel": "telegram", "id": id}});
    let reply = t
        .server
        .ok(
            AGENT,
            "elevated.directive",
            directive("777", "/elevated full"),
        )
        .await;
    assert_eq!(reply["handled"], true);
    let stored = std::fs::read_to_string(t.server.data().join("sessions.json")).unwrap();
    assert!(stored.contains("\"off\""), "{stored}");
    let reply = t
        .server
        .ok(
            AGENT,
            "elevated.directive",
            directive("4242", "/elevated ask"),
        )
        .await;
    assert!(
        reply["reply"]
            .as_str()
            .unwrap()
            .starts_with("Elevated mode is now ask"),
        "{reply}"
    );
    let outcomes = elevated_audit(&t.server, 2).await;
    assert!(
        outcomes.contains(&(json!("refused"), json!("777"))),
        "{outcomes:?}"
    );
    assert!(
        outcomes.contains(&(json!("set"), json!("555"))),
        "{outcomes:?}"
    );
    let not_a_directive = t
        .server
        .ok(AGENT, "elevated.directive", directive("4242", "hello"))
        .await;
    assert_eq!(not_a_directive, json!({"handled": false}));
}

/// A level lives only as long as the binding it was set through: when another session takes
/// the chat, `/elevated off` typed there would reach that one, so the first session's level is
/// dropped (and audited) rather than left in force where the owner can no longer end it. An
/// `off` typed in a forum topic bound to another session reaches the chat's session too.
#[tokio::test]
async fn drops_a_level_when_its_chat_binding_moves_and_an_off_in_a_topic_reaches_the_chat() {
    let t = Telegram::start(
        &format!("approvers: [{APPROVER}]"),
        "tools: { elevated: { enabled: true, allowFrom: { telegram: ['4242'] } } },",
    )
    .await;
    let bind = |session: &str, to: i64, thread: Option<i64>| json!({"sessionKey": session, "channel": "telegram", "to": to.to_string(), "threadId": thread});
    let check = |session: Option<&str>| {
        let mut params =
            json!({"argv": ["echo", "x"], "cwd": t.server.scratch(), "agentId": "main"});
        if let Some(session) = session {
            params["sessionKey"] = json!(session);
        }
        params
    };
    let unelevated = t.server.ok(AGENT, "exec.policy.check", check(None)).await;

    t.server
        .ok(AGENT, "session.bind", bind("s1", APPROVER, None))
        .await;
    t.say(APPROVER, "/elevated full").await;
    let set = wait_replies(&t.fake, APPROVER, 1).await;
    assert!(
        set[0].contains("Elevated mode is now full") && set[0].contains("Session: s1."),
        "{set:?}"
    );
    let full = t
        .server
        .ok(AGENT, "exec.policy.check", check(Some("s1")))
        .await;
    assert_eq!(full["decision"], "allow", "{full}");

    // The level is the binding token's: another agent host naming s1 does not get it, and
    // cannot set one on it.
    let borrowed = t
        .server
        .ok(OTHER_AGENT, "exec.policy.check", check(Some("s1")))
        .await;
    assert_eq!(borrowed, unelevated);
    let directive = json!({"text": "/elevated full", "sessionKey": "s1", "sender": {"channel": "telegram", "id": "4242"}});
    assert_eq!(
        t.server
            .error_code(OTHER_AGENT, "elevated.directive", directive)
            .await,
        "session_forbidden"
    );

    // Another session takes the chat: s1's level is gone, not left where `off` cannot reach.
    t.server
        .ok(AGENT, "session.bind", bind("decoy", APPROVER, None))
        .await;
    let after = t
        .server
        .ok(AGENT, "exec.policy.check", check(Some("s1")))
        .await;
    assert_eq!(after, unelevated);
    let outcomes = elevated_audit(&t.server, 2).await;
    assert!(
        outcomes.contains(&(json!("dropped"), Value::Null)),
        "{outcomes:?}"
    );

    // A forum: s2 holds the whole chat at `full`, a decoy holds topic 7; `off` typed in the
    // topic turns off both.
    let forum: i64 = -100_777;
    let in_forum = |topic: Option<i64>, text: &str| {
        let mut message = json!({
            "from": {"id": APPROVER, "is_bot": false, "first_name": "Alice", "username": "alice"},
            "chat": {"id": forum, "type": "supergroup", "title": "ops", "is_forum": true},
            "text": text,
        });
        if let Some(topic) = topic {
            message["message_thread_id"] = json!(topic);
            message["is_topic_message"] = json!(true);
        }
        json!({"message": message})
    };
    t.server
        .ok(AGENT, "session.bind", bind("s2", forum, None))
        .await;
    t.inject(in_forum(None, "/elevated full")).await;
    wait_replies(&t.fake, forum, 1).await;
    t.server
        .ok(AGENT, "session.bind", bind("decoy2", forum, Some(7)))
        .await;
    t.inject(in_forum(Some(7), "/elevated off")).await;
    let off = wait_replies(&t.fake, forum, 2).await;
    assert!(
        off[1].contains("Session: decoy2.") && off[1].contains("Session: s2."),
        "{off:?}"
    );
    let s2 = t
        .server
        .ok(AGENT, "exec.policy.check", check(Some("s2")))
        .await;
    assert_eq!(s2["decision"], "deny", "{s2}");
}

#[tokio::test]
async fn forwards_text_prompts_in_both_modes_through_agent_and_session_filters() {
    let t = Telegram::start(
        "enabled: false",
        "approvals: { exec: { enabled: true, mode: 'both', agentFilter: ['main'],
           sessionFilter: ['re:^s[0-9]$'], targets: [{ channel: 'telegram', to: '-500' }] } },",
    )
    .await;
    let turn = json!({"turnSource": {"channel": "telegram", "to": "-600"}});
    let id = t.request(turn.clone()).await;
    let sent = t.calls("sendMessage", 2).await;
    let mut chats: Vec<Value> = sent
        .iter()
        .map(|call| call.body["chat_id"].clone())
        .collect();
    chats.sort_by_key(|chat| chat.as_i64());
    assert_eq!(chats, [json!(-600), json!(-500)]);
    for call in &sent {
        let text = call.body["text"].as_str().unwrap();
        assert!(text.contains(&format!("/approve {}", &id[..8])), "{text}");
        assert!(buttons(call).is_empty(), "text prompts carry no buttons");
    }
    // Filtered out by agent, then by session: no chat route and no operator, so each request
    // expires at once with no-approval-route.
    for extra in [
        json!({"agentId": "ops", "turnSource": turn["turnSource"]}),
        json!({"sessionKey": "s10", "turnSource": turn["turnSource"]}),
    ] {
        let filtered = t.request(extra).await;
        let record = t.settled(&filtered).await;
        assert_eq!(
            (record["state"].clone(), record["reason"].clone()),
            (json!("expired"), json!("no-approval-route"))
        );
    }
    assert_eq!(
        t.fake
            .calls()
            .iter()
            .filter(|c| c.method == "sendMessage")
            .count(),
        2
    );
    assert_eq!(t.approval(&id).await["state"], "pending");
}

/// `(outcome, senderId)` of the elevated records in the audit log, once there are `at_least`.
pub(crate) async fn elevated_audit(server: &Server, at_least: usize) -> Vec<(Value, Value)> {
    let log = server.data().join("audit.jsonl");
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let outcomes: Vec<(Value, Value)> = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .filter(|record| record["payload"]["type"] == "elevated")
            .map(|record| {
                (
                    record["payload"]["outcome"].clone(),
                    record["payload"]["senderId"].clone(),
                )
            })
            .collect();
        if outcomes.len() >= at_least || tokio::time::Instant::now() >= deadline {
            return outcomes;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The secret the webhook tests configure.
pub(crate) const WEBHOOK_SECRET: &str = "hook_secret-0123456789abcdef012345";

#[tokio::test]
async fn resolves_by_webhook_on_the_gateways_listener_and_refuses_a_wrong_secret() {
    let fake = gatehouse_fakes::telegram::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let listen = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let hook = format!("http://{listen}/telegram/webhook");
    let config = format!(
        "channels: {{ telegram: {{ botToken: '123:TEST-token', apiUrl: '{}',
           webhookUrl: '{hook}', webhookSecret: '{WEBHOOK_SECRET}',
           execApprovals: {{ approvers: [{APPROVER}] }} }} }},",
        fake.base_url
    );
    let server = Server::start_on(&config, &listen.to_string()).await;
    let t = Telegram { fake, server };
    let registered = t.calls("setWebhook", 1).await;
    assert_eq!(registered[0].body["url"], json!(hook));
    assert_eq!(registered[0].body["secret_token"], json!(WEBHOOK_SECRET));
    assert!(
        t.fake
            .calls()
            .iter()
            .all(|call| call.method != "getUpdates"),
        "no polling in webhook mode"
    );

    let id = t.request(json!({})).await;
    let sent = t.calls("sendMessage", 1).await;
    let allow = button(&buttons(&sent[0]), "Allow once").to_owned();
    let forged = json!({"update_id": 900, "callback_query": {"id": "900", "chat_instance": "1",
        "from": {"id": APPROVER, "is_bot": false, "first_name": "Alice", "username": "alice"},
        "data": allow,
        "message": {"message_id": 1, "date": 0, "chat": {"id": APPROVER, "type": "private"}}}});
    let http = reqwest::Client::new();
    for secret in [None, Some("wrong-secret")] {
        let mut request = http.post(&hook).json(&forged);
        if let Some(secret) = secret {
            request = request.header(gatehouse_telegram::SECRET_HEADER, secret);
        }
        let status = request.send().await.unwrap().status();
        assert_eq!(status, reqwest::StatusCode::UNAUTHORIZED, "{secret:?}");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(t.approval(&id).await["state"], "pending");

    t.press(APPROVER, APPROVER, 1, &allow).await;
    let record = t.settled(&id).await;
    assert_eq!(record["decision"], "allow-once");
    assert_eq!(record["resolvedBy"], "telegram:4242 (@alice)");
}

#[tokio::test]
async fn doctor_reports_the_chat_delivery_failures_of_a_running_gateway() {
    let t = Telegram::start(&format!("approvers: [{APPROVER}]"), "").await;
    t.fake
        .control("/_fake/config", &json!({"never_started": [APPROVER]}))
        .await
        .unwrap();
    t.request(json!({})).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let status = t.server.ok(ADMIN, "gateway.status", json!({})).await;
        if status["chat"]["failures"]
            .as_array()
            .is_some_and(|f| !f.is_empty())
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no failure: {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (code, stdout) = doctor_live(&t.server).await;
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("live check: gateway reachable"), "{stdout}");
    assert!(
        stdout.contains("warning: chat delivery to telegram:user:4242 (telegram) failed: send"),
        "{stdout}"
    );
    assert!(stdout.contains("press Start"), "{stdout}");
    assert!(
        stdout.contains("(card of approval ") && stdout.contains(", undelivered): "),
        "{stdout}"
    );
}

/// Operator report: a channel whose connection ended for good still counted as connected and
/// as an approval route, so requests only it could reach waited out their timeout. Telegram
/// polling ends on a token refused while running (401); the status now reports the channel
/// stopped and such a request expires at once.
#[tokio::test]
async fn reports_a_channel_that_stopped_and_stops_routing_to_it() {
    let t = Telegram::start(&format!("approvers: ['{APPROVER}']"), "").await;
    t.calls("getUpdates", 1).await;
    t.fake
        .control(
            "/_fake/faults",
            &json!({"method": "getUpdates", "status": 401, "description": "Unauthorized",
                "count": 100}),
        )
        .await
        .unwrap();
    // Ends the poll under way, so the next one meets the fault.
    t.say(APPROVER, "hello").await;
    let status = crate::chat_support::eventually("telegram reported stopped", async || {
        let status = t
            .server
            .ok(crate::gateway::ADMIN, "gateway.status", json!({}))
            .await;
        let stopped = status["chat"]["stopped"].as_array().cloned()?;
        (!stopped.is_empty()).then_some(status)
    })
    .await;
    assert_eq!(
        status["chat"]["stopped"][0]["channel"], "telegram",
        "{status}"
    );
    assert_eq!(status["chat"]["channels"], json!([]), "{status}");
    // Approvers' chats are for operators' eyes.
    let seen_by_agent = t.server.ok(AGENT, "gateway.status", json!({})).await;
    assert!(seen_by_agent.get("chat").is_none(), "{seen_by_agent}");
    let id = t.request(json!({})).await;
    let record = t.settled(&id).await;
    assert_eq!(record["reason"], "no-approval-route", "{record}");
    let (code, stdout) = doctor_live(&t.server).await;
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout
            .contains("warning: chat channel telegram stopped and is no longer an approval route"),
        "{stdout}"
    );
}

/// `gatehouse doctor` with the live check against `server`: its exit code and stdout.
pub(crate) async fn doctor_live(server: &Server) -> (Option<i32>, String) {
    let doctor = tokio::process::Command::new(env!("CARGO_BIN_EXE_gatehouse"))
        .args([
            "doctor",
            "--url",
            &server.base,
            "--token",
            ADMIN,
            "--data-dir",
        ])
        .arg(server.data())
        .output()
        .await
        .unwrap();
    (
        doctor.status.code(),
        String::from_utf8_lossy(&doctor.stdout).into_owned(),
    )
}

/// A tool approval (`tools.call.request`) reaches the approver as a card naming the tool, its
/// arguments and the requester's words; allow-always stores a grant that covers the next call;
/// the decision, the result and the grant are in the audit log under the call's id.
#[tokio::test]
async fn delivers_a_tool_approval_card_and_an_allow_always_press_grants_the_tool() {
    let t = Telegram::start(
        &format!("approvers: [{APPROVER}]"),
        "tools: { profile: 'full', alwaysAsk: ['mcp__github'] },",
    )
    .await;
    let call = json!({
        "agentId": "main", "sessionKey": "claude-code:s1", "tool": "mcp__github__create_issue",
        "params": {"title": "Flaky test", "body": "see CI run 42"},
    });
    let check = t.server.ok(AGENT, "tools.call.check", call.clone()).await;
    assert_eq!(check["decision"], "ask", "{check}");
    assert_eq!(check["grant"]["scope"], "tool", "{check}");

    let mut request = call.clone();
    request["callId"] = json!("toolu_tg_1");
    request["title"] = json!("Claude Code on build-box: mcp__github__create_issue");
    request["description"] = json!("Project: /srv/app\nSession: s1 (claude-code PreToolUse)");
    request["severity"] = json!("critical");
    request["twoPhase"] = json!(true);
    let accepted = t.server.ok(AGENT, "tools.call.request", request).await;
    assert_eq!(accepted["status"], "accepted", "{accepted}");
    let id = accepted["id"].as_str().unwrap().to_owned();

    let sent = t.calls("sendMessage", 1).await;
    assert_eq!(sent[0].body["chat_id"], json!(APPROVER));
    let text = sent[0].body["text"].as_str().unwrap();
    for shown in [
        "Tool approval needed",
        "mcp__github__create_issue",
        "Flaky test",
        "Claude Code on build-box",
        "critical",
        &id[..8],
    ] {
        assert!(text.contains(shown), "{shown:?} missing from {text}");
    }
    let buttons = buttons(&sent[0]);
    assert_eq!(buttons.len(), 3, "{buttons:?}");
    t.press(APPROVER, APPROVER, 1, button(&buttons, "Allow always"))
        .await;
    let record = t.settled(&id).await;
    assert_eq!(record["decision"], "allow-always", "{record}");
    assert_eq!(
        record["request"]["tool"]["name"],
        "mcp__github__create_issue"
    );
    assert_eq!(record["request"]["tool"]["severity"], "critical");

    let grants = t.server.ok(ADMIN, "tools.grants.list", json!({})).await;
    assert_eq!(grants["grants"][0]["id"], id.as_str(), "{grants}");
    assert_eq!(grants["grants"][0]["grantedBy"], "telegram:4242 (@alice)");
    let later = t.server.ok(AGENT, "tools.call.check", call).await;
    assert_eq!(later["decision"], "allow", "{later}");
    assert_eq!(later["reasons"][0]["rule"], "granted", "{later}");

    let finished = t
        .server
        .ok(
            AGENT,
            "tools.call.finished",
            json!({"callId": "toolu_tg_1", "ok": true, "durationMs": 850}),
        )
        .await;
    assert_eq!(finished["matched"], true, "{finished}");
    assert_eq!(finished["approvalId"], id.as_str(), "{finished}");
    let records = crate::gateway::audit_records(&t.server, &id, |records| {
        records.iter().any(|r| r["kind"] == "execution")
            && records.iter().any(|r| r["kind"] == "delivery")
            && records.iter().filter(|r| r["kind"] == "decision").count() >= 2
    })
    .await;
    let execution = records.iter().find(|r| r["kind"] == "execution").unwrap();
    assert_eq!(execution["runId"], "toolu_tg_1");
    assert_eq!(execution["payload"]["ok"], true);
    let requested = records.iter().find(|r| r["kind"] == "request").unwrap();
    assert_eq!(
        requested["payload"]["request"]["tool"]["title"],
        "Claude Code on build-box: mcp__github__create_issue"
    );
}
