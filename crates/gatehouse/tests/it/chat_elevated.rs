//! Issue 36, "`/elevated` reaches the session it was set on": a session bound (by a request's
//! `turnSource`, as agent hosts bind them) to each place a chat offers — a guild channel, a
//! thread and a DM on Discord; a private chat, a group and a forum topic on Telegram; a
//! channel, a thread and a DM on Slack — is found again by `/elevated on|ask|full|off` and the
//! query typed there, as text and as a slash command where the platform has one. Before,
//! a Discord thread or DM and a Slack DM answered "No agent session is bound to this chat"
//! while the session stayed elevated.

use std::future::Future;

use gatehouse_fakes::discord::BOT_ID;
use serde_json::{Value, json};

use crate::chat_support::{eventually, request};
use crate::gateway::Server;

/// The levels typed, in order, with the start of the reply each must get; `""` is the query.
const STEPS: [(&str, &str); 6] = [
    ("on", "Elevated mode is now on"),
    ("", "Elevated mode is on (set for this session)"),
    ("ask", "Elevated mode is now ask"),
    ("full", "Elevated mode is now full"),
    ("off", "Elevated mode is now off"),
    ("", "Elevated mode is off (set for this session)"),
];

/// A request from `turn_source` in session `session`, which binds the session there.
async fn bind_by_request(server: &Server, session: &str, turn_source: Value) {
    request(
        server,
        json!({"sessionKey": session, "turnSource": turn_source}),
    )
    .await;
}

/// Runs [`STEPS`] through `say` (which types or runs `/elevated <level>` and returns the
/// reply), alternating the two ways when `slash` is given, and checks every reply and that
/// each stored level reached `session`.
async fn walk<F, Fut>(server: &Server, place: &str, session: &str, mut say: F)
where
    F: FnMut(usize, &'static str) -> Fut,
    Fut: Future<Output = String>,
{
    for (step, (level, expected)) in STEPS.iter().enumerate() {
        let reply = say(step, level).await;
        assert!(
            reply.contains(expected),
            "{place}, /elevated {level}: {reply:?}"
        );
        if !level.is_empty() {
            assert!(
                reply.contains(&format!("Session: {session}.")),
                "{place}, /elevated {level} reached another session: {reply:?}"
            );
        }
    }
    let stored = std::fs::read_to_string(server.data().join("sessions.json")).unwrap();
    let stored: Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(
        stored["sessions"][session]["elevated"], "off",
        "{place}: {stored}"
    );
}

mod discord {
    use super::*;
    use crate::discord::{APPROVER, Discord, ORIGIN, ephemeral_replies, posted};

    const GATES: &str = "tools: { elevated: { enabled: true, allowFrom: { discord: ['5000'] } } },";

    /// Types `/elevated <level>` in `channel` (mentioning the bot outside a DM); the reply.
    async fn typed(d: &Discord, channel: &str, mention: bool, level: &str) -> String {
        let before = posted(d, channel).len();
        let text = format!("/elevated {level}");
        let content = if mention {
            format!("<@{BOT_ID}> {text}")
        } else {
            text
        };
        d.inject(
            "MESSAGE_CREATE",
            json!({"channel_id": channel, "author": {"id": APPROVER.to_string()},
                "content": content}),
        )
        .await;
        eventually("a reply", async || posted(d, channel).get(before).cloned()).await
    }

    /// Runs the slash command `/elevated [level]` in `channel`; the ephemeral reply.
    async fn slash(d: &Discord, channel: &str, level: &str) -> String {
        let before = ephemeral_replies(&d.fake).len();
        let options = if level.is_empty() {
            json!([])
        } else {
            json!([{"name": "level", "type": 3, "value": level}])
        };
        d.inject(
            "INTERACTION_CREATE",
            json!({"type": 2, "channel_id": channel, "user": {"id": APPROVER.to_string()},
                "data": {"name": "elevated", "type": 1, "options": options}}),
        )
        .await;
        eventually("an ephemeral reply", async || {
            ephemeral_replies(&d.fake).get(before).cloned()
        })
        .await
    }

    #[tokio::test]
    async fn discord_elevated_reaches_sessions_bound_to_a_channel_a_thread_and_a_dm() {
        let d = Discord::start_with(&format!("approvers: ['{APPROVER}']"), GATES).await;
        let origin = ORIGIN.to_string();
        let opened = d
            .fake
            .control("/_fake/threads", &json!({"parent_id": origin}))
            .await
            .unwrap();
        let thread = opened["id"].as_str().unwrap().to_owned();
        let dm = d.dm(APPROVER).await;
        bind_by_request(
            &d.server,
            "s-channel",
            json!({"channel": "discord", "to": origin}),
        )
        .await;
        bind_by_request(
            &d.server,
            "s-thread",
            json!({"channel": "discord", "to": origin, "threadId": thread}),
        )
        .await;
        bind_by_request(
            &d.server,
            "s-dm",
            json!({"channel": "discord", "to": format!("user:{APPROVER}")}),
        )
        .await;
        // Each card and notice has arrived, so none is read as a reply.
        d.calls("createMessage", 5).await;

        for (place, channel, session, mention) in [
            ("guild channel", &origin, "s-channel", true),
            ("thread", &thread, "s-thread", true),
            ("DM", &dm, "s-dm", false),
        ] {
            walk(&d.server, place, session, |step, level| {
                let d = &d;
                async move {
                    if step % 2 == 0 {
                        typed(d, channel, mention, level).await
                    } else {
                        slash(d, channel, level).await
                    }
                }
            })
            .await;
        }
    }
}

mod telegram {
    use super::*;
    use crate::telegram::{APPROVER, FORUM, Telegram, replies_to};

    const GATES: &str =
        "tools: { elevated: { enabled: true, allowFrom: { telegram: ['4242'] } } },";
    const GROUP: i64 = -500;

    /// Types `/elevated <level>` in `chat` (in forum topic `topic`); the reply.
    async fn typed(t: &Telegram, chat: i64, topic: Option<i64>, level: &str) -> String {
        let before = replies_to(&t.fake, chat).len();
        let mut message = json!({
            "from": {"id": APPROVER, "is_bot": false, "first_name": "Alice", "username": "alice"},
            "chat": {"id": chat, "type": if chat > 0 { "private" } else { "supergroup" }},
            "text": format!("/elevated {level}"),
        });
        if let Some(topic) = topic {
            message["chat"]["is_forum"] = json!(true);
            message["message_thread_id"] = json!(topic);
            message["is_topic_message"] = json!(true);
        }
        t.inject(json!({ "message": message })).await;
        eventually("a reply", async || {
            replies_to(&t.fake, chat).get(before).cloned()
        })
        .await
    }

    #[tokio::test]
    async fn telegram_elevated_reaches_sessions_bound_to_a_private_chat_a_group_and_a_topic() {
        let t = Telegram::start(&format!("approvers: [{APPROVER}]"), GATES).await;
        bind_by_request(
            &t.server,
            "s-private",
            json!({"channel": "telegram", "to": format!("user:{APPROVER}")}),
        )
        .await;
        bind_by_request(
            &t.server,
            "s-group",
            json!({"channel": "telegram", "to": GROUP.to_string()}),
        )
        .await;
        bind_by_request(
            &t.server,
            "s-topic",
            json!({"channel": "telegram", "to": FORUM.to_string(), "threadId": "42"}),
        )
        .await;
        t.calls("sendMessage", 5).await;
        for (place, chat, topic, session) in [
            ("private chat", APPROVER, None, "s-private"),
            ("group", GROUP, None, "s-group"),
            ("forum topic", FORUM, Some(42), "s-topic"),
        ] {
            walk(&t.server, place, session, |_, level| {
                let t = &t;
                async move { typed(t, chat, topic, level).await }
            })
            .await;
        }
    }
}

mod slack {
    use super::*;
    use crate::slack::{APPROVER, ORIGIN, Slack, THREAD};

    const GATES: &str =
        "tools: { elevated: { enabled: true, allowFrom: { slack: ['U0ALICE'] } } },";
    /// The approver's DM with the bot, as Slack names the conversation.
    const DM: &str = "DU0ALICE";

    /// Every text the bot sent `APPROVER`: ephemerals, and messages in their DM.
    fn replies(s: &Slack) -> Vec<String> {
        s.fake
            .calls()
            .into_iter()
            .filter(|c| {
                (c.method == "chat.postEphemeral" && c.body["user"] == APPROVER)
                    || (c.method == "chat.postMessage" && c.body["channel"] == DM)
            })
            .map(|c| c.body["text"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    /// Types `/elevated <level>` in `channel` (in `thread`), mentioning the bot outside the DM.
    async fn typed(s: &Slack, channel: &str, thread: Option<&str>, level: &str) -> String {
        let before = replies(s).len();
        let direct = channel == DM;
        let text = if direct {
            format!("/elevated {level}")
        } else {
            format!("<@U0FAKEBOT> /elevated {level}")
        };
        let mut event = json!({"type": "message", "channel": channel, "user": APPROVER,
            "channel_type": if direct { "im" } else { "channel" }, "text": text});
        if let Some(thread) = thread {
            event["thread_ts"] = json!(thread);
        }
        s.inject(json!({"type": "events_api", "payload": {"event": event}}))
            .await;
        eventually("a reply", async || replies(s).get(before).cloned()).await
    }

    /// Runs the slash command `/elevated [level]` in `channel`; its own (ephemeral) answer.
    async fn slash(s: &Slack, channel: &str, level: &str) -> String {
        let answered = s
            .inject(
                json!({"type": "slash_commands", "payload": {"command": "/elevated",
                "text": level, "user_id": APPROVER, "channel_id": channel}}),
            )
            .await;
        let body: Value =
            serde_json::from_str(answered["result"]["body"].as_str().unwrap_or_default()).unwrap();
        body["text"].as_str().unwrap_or_default().to_owned()
    }

    #[tokio::test]
    async fn slack_elevated_reaches_sessions_bound_to_a_channel_a_thread_and_a_dm() {
        let s = Slack::start_with(&format!("approvers: ['{APPROVER}']"), true, GATES).await;
        bind_by_request(
            &s.server,
            "s-channel",
            json!({"channel": "slack", "to": ORIGIN}),
        )
        .await;
        bind_by_request(
            &s.server,
            "s-thread",
            json!({"channel": "slack", "to": ORIGIN, "threadId": THREAD}),
        )
        .await;
        bind_by_request(
            &s.server,
            "s-dm",
            json!({"channel": "slack", "to": APPROVER}),
        )
        .await;
        s.calls("chat.postMessage", 5).await;

        for (place, channel, thread, session) in [
            ("channel", ORIGIN, None, "s-channel"),
            // Slack sends a slash command without its thread: typed only there.
            ("thread", ORIGIN, Some(THREAD), "s-thread"),
            ("DM", DM, None, "s-dm"),
        ] {
            walk(&s.server, place, session, |step, level| {
                let s = &s;
                async move {
                    if step % 2 == 1 && thread.is_none() {
                        slash(s, channel, level).await
                    } else {
                        typed(s, channel, thread, level).await
                    }
                }
            })
            .await;
        }
    }
}
