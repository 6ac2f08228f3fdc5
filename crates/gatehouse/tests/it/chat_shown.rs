//! Issue 36, "decisions only on what was shown", on every platform: a typed id shorter than the
//! minimum prefix is refused (typed and slash), an approval another channel's filters kept away
//! from this one is not decided here unless `decideUndelivered` says so, and a reply that lists
//! ids reaches its sender alone.

use gatehouse_fakes::discord::{APP_ID, BOT_ID, GUILD_ID};
use serde_json::{Value, json};

use crate::chat_support::{approval, eventually, settled};
use crate::gateway::{AGENT, APPROVER as OPERATOR, Server};

/// Two approvals the channel is shown and one it is not, all sharing the prefix `0f3c`.
const SHOWN: &str = "0f3c9a1e-7b2d-4c1a-9e55-1234567890ab";
const SHOWN_TOO: &str = "0f3cffff-7b2d-4c1a-9e55-1234567890ab";
const HIDDEN: &str = "0f3c0000-7b2d-4c1a-9e55-1234567890ab";

/// The channel's own filter: only session `s1` reaches it.
const FILTER: &str = "sessionFilter: ['s1']";

/// What a shared chat is told about an ambiguous prefix: a count, no ids.
const UNLISTED: &str = "0f3c matches 3 approvals. Type more of the id.";
/// What the sender alone is told: the two ids shown on their channel, not the third.
const LISTED: &str = "0f3c matches 3 approvals (0f3c9a1e, 0f3cffff). Type more of the id.";

/// Creates the three approvals; the filtered one stays pending because an operator listens.
async fn three_approvals(server: &Server) {
    for (id, session) in [(SHOWN, "s1"), (SHOWN_TOO, "s1"), (HIDDEN, "s2")] {
        let params = json!({"id": id, "command": "make deploy", "argv": ["make", "deploy"],
            "cwd": server.scratch(), "agentId": "main", "sessionKey": session, "twoPhase": true});
        let accepted = server.ok(AGENT, "exec.approval.request", params).await;
        assert_eq!(accepted["status"], "accepted", "{accepted}");
    }
}

fn not_shown(channel: &str) -> String {
    format!(
        "Approval 0f3c0000 was not shown to approvers on {channel}, so it cannot be decided here. \
         Decide it where its card was shown, or in the Control UI."
    )
}

const TOO_SHORT: &str =
    "0f3 is too short: type at least 4 characters of the id (the 8 on the card always work).";

mod telegram {
    use super::*;
    use crate::telegram::{APPROVER, Telegram};

    /// The replies in `chat` once there are `count`, as people read them (Telegram's HTML
    /// bold title unwrapped).
    async fn wait_replies(t: &gatehouse_fakes::FakeHandle, chat: i64, count: usize) -> Vec<String> {
        crate::telegram::wait_replies(t, chat, count)
            .await
            .into_iter()
            .map(|text| {
                text.trim_start_matches("<b>")
                    .trim_end_matches("</b>")
                    .to_owned()
            })
            .collect()
    }

    /// A group the approver also writes in.
    const GROUP: i64 = -500;

    async fn in_group(t: &Telegram, text: &str) {
        t.inject(json!({"message": {
            "from": {"id": APPROVER, "is_bot": false, "first_name": "Alice", "username": "alice"},
            "chat": {"id": GROUP, "type": "group", "title": "ops"},
            "text": text,
        }}))
        .await;
    }

    #[tokio::test]
    async fn telegram_decides_only_what_it_showed_and_lists_ids_privately() {
        let t = Telegram::start(&format!("approvers: [{APPROVER}], {FILTER}"), "").await;
        let _operator = t.server.ws(OPERATOR).await;
        three_approvals(&t.server).await;
        t.calls("sendMessage", 2).await;

        in_group(&t, "/approve 0f3c deny").await;
        assert_eq!(wait_replies(&t.fake, GROUP, 1).await, [UNLISTED]);
        t.say(APPROVER, "/approve 0f3c deny").await;
        assert_eq!(wait_replies(&t.fake, APPROVER, 3).await[2], LISTED);
        t.say(APPROVER, "/approve 0f3 deny").await;
        assert!(
            wait_replies(&t.fake, APPROVER, 4).await[3].starts_with(TOO_SHORT),
            "a prefix under the minimum resolves nothing"
        );
        t.say(APPROVER, "/approve 0f3c0000 deny").await;
        assert_eq!(
            wait_replies(&t.fake, APPROVER, 5).await[4],
            not_shown("telegram")
        );
        assert_eq!(approval(&t.server, HIDDEN).await["state"], "pending");

        t.say(APPROVER, "/approve 0f3c9a1e deny").await;
        assert_eq!(settled(&t.server, SHOWN).await["decision"], "deny");
    }

    #[tokio::test]
    async fn telegram_decides_undelivered_approvals_when_configured() {
        let t = Telegram::start(
            &format!("approvers: [{APPROVER}], {FILTER}, decideUndelivered: true"),
            "",
        )
        .await;
        let _operator = t.server.ws(OPERATOR).await;
        three_approvals(&t.server).await;
        t.say(APPROVER, "/approve 0f3c0000 allow-once").await;
        assert_eq!(settled(&t.server, HIDDEN).await["decision"], "allow-once");
    }
}

mod discord {
    use super::*;
    use crate::discord::{APPROVER, Discord, ORIGIN, posted, wait_for_replies};

    /// The approver types `text` in `channel`, mentioning the bot in a guild channel.
    async fn typed(d: &Discord, channel: &str, text: &str) {
        d.inject(
            "MESSAGE_CREATE",
            json!({"channel_id": channel, "author": {"id": APPROVER.to_string()},
                "content": text}),
        )
        .await;
    }

    /// The approver runs `/approve id:<id> decision:deny` in the guild channel.
    async fn slash(d: &Discord, id: &str) {
        let options = json!([{"name": "id", "type": 3, "value": id},
            {"name": "decision", "type": 3, "value": "deny"}]);
        d.inject(
            "INTERACTION_CREATE",
            json!({"type": 2, "channel_id": ORIGIN.to_string(),
                "user": {"id": APPROVER.to_string()},
                "data": {"name": "approve", "type": 1, "options": options}}),
        )
        .await;
    }

    async fn wait_posted(d: &Discord, channel: &str, count: usize) -> Vec<String> {
        eventually(&format!("{count} replies in {channel}"), async || {
            Some(posted(d, channel)).filter(|texts| texts.len() >= count)
        })
        .await
    }

    #[tokio::test]
    async fn discord_decides_only_what_it_showed_and_lists_ids_privately() {
        let d = Discord::start(&format!("approvers: ['{APPROVER}'], {FILTER}")).await;
        let _operator = d.server.ws(OPERATOR).await;
        three_approvals(&d.server).await;
        d.calls("createMessage", 2).await;
        let dm = d.dm(APPROVER).await;
        let origin = ORIGIN.to_string();

        typed(&d, &origin, &format!("<@{BOT_ID}> /approve 0f3c deny")).await;
        assert_eq!(wait_posted(&d, &origin, 1).await, [UNLISTED]);
        typed(&d, &dm, "/approve 0f3c deny").await;
        assert_eq!(wait_posted(&d, &dm, 1).await, [LISTED]);

        slash(&d, "0f3").await;
        assert!(wait_for_replies(&d.fake, 1).await[0].starts_with(TOO_SHORT));
        slash(&d, "0f3c").await;
        assert_eq!(wait_for_replies(&d.fake, 2).await[1], LISTED);
        slash(&d, "0f3c0000").await;
        assert_eq!(wait_for_replies(&d.fake, 3).await[2], not_shown("discord"));
        assert_eq!(approval(&d.server, HIDDEN).await["state"], "pending");

        typed(&d, &dm, "/approve 0f3c9a1e deny").await;
        assert_eq!(settled(&d.server, SHOWN).await["decision"], "deny");
    }

    /// A notice that "the prompt was sent to the approvers' DMs" shows no command: when every
    /// Discord DM was refused but Telegram's card arrived (so no fallback is posted), Discord's
    /// approvers were shown nothing and do not decide by the id the notice names.
    #[tokio::test]
    async fn discord_counts_no_origin_notice_as_shown() {
        let discord = gatehouse_fakes::discord::spawn("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        discord
            .control("/_fake/config", &json!({"dm_closed": [APPROVER]}))
            .await
            .unwrap();
        let telegram = gatehouse_fakes::telegram::spawn("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let config = format!(
            "channels: {{
               discord: {{ botToken: 'fake-token', apiUrl: '{}', applicationId: '{APP_ID}',
                 guildIds: ['{GUILD_ID}'], execApprovals: {{ approvers: ['{APPROVER}'] }} }},
               telegram: {{ botToken: '123:TEST-token', apiUrl: '{}',
                 execApprovals: {{ approvers: [4242] }} }} }},",
            discord.base_url, telegram.base_url
        );
        let server = Server::start(&config).await;
        discord
            .wait_for_calls("gateway.IDENTIFY", 1, crate::chat_support::WAIT)
            .await
            .unwrap();
        let d = Discord {
            fake: discord,
            server,
        };
        let id = crate::chat_support::request(&d.server, crate::discord::from_origin()).await;
        telegram
            .wait_for_calls("sendMessage", 1, crate::chat_support::WAIT)
            .await
            .unwrap();
        let origin = ORIGIN.to_string();
        let notice = wait_posted(&d, &origin, 1).await;
        assert!(notice[0].contains("approvers' DMs"), "{notice:?}");
        typed(
            &d,
            &origin,
            &format!("<@{BOT_ID}> /approve {} deny", &id[..8]),
        )
        .await;
        let replies = wait_posted(&d, &origin, 2).await;
        assert!(
            replies[1].contains("was not shown to approvers on discord"),
            "{replies:?}"
        );
        assert_eq!(approval(&d.server, &id).await["state"], "pending");
    }

    #[tokio::test]
    async fn discord_decides_undelivered_approvals_when_configured() {
        let d = Discord::start(&format!(
            "approvers: ['{APPROVER}'], {FILTER}, decideUndelivered: true"
        ))
        .await;
        let _operator = d.server.ws(OPERATOR).await;
        three_approvals(&d.server).await;
        slash(&d, "0f3c0000").await;
        assert_eq!(settled(&d.server, HIDDEN).await["decision"], "deny");
    }
}

mod slack {
    use super::*;
    use crate::slack::{APPROVER, ORIGIN, Slack, wait_for_ephemerals};

    /// The approver runs `/approve <text>`; the command's own (ephemeral) answer.
    async fn slash(s: &Slack, text: &str) -> String {
        let answered = s
            .inject(
                json!({"type": "slash_commands", "payload": {"command": "/approve",
                "text": text, "user_id": APPROVER, "channel_id": ORIGIN}}),
            )
            .await;
        let body: Value =
            serde_json::from_str(answered["result"]["body"].as_str().unwrap_or_default()).unwrap();
        assert_eq!(body["response_type"], "ephemeral", "{body}");
        body["text"].as_str().unwrap_or_default().to_owned()
    }

    /// Messages the bot posted (not ephemerally) in `channel`.
    fn posted(s: &Slack, channel: &str) -> Vec<String> {
        s.fake
            .calls()
            .into_iter()
            .filter(|c| c.method == "chat.postMessage" && c.body["channel"] == channel)
            .map(|c| c.body["text"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    #[tokio::test]
    async fn slack_decides_only_what_it_showed_and_lists_ids_privately() {
        let s = Slack::start(&format!("approvers: ['{APPROVER}'], {FILTER}"), true).await;
        let _operator = s.server.ws(OPERATOR).await;
        three_approvals(&s.server).await;
        s.calls("chat.postMessage", 2).await;

        // Typed in a shared channel: the list goes to its sender alone, ephemerally.
        s.inject(
            json!({"type": "events_api", "payload": {"event": {"type": "message",
            "channel": ORIGIN, "channel_type": "channel", "user": APPROVER,
            "text": "<@U0FAKEBOT> approve 0f3c deny"}}}),
        )
        .await;
        assert_eq!(wait_for_ephemerals(&s, APPROVER, 1).await, [LISTED]);
        assert!(posted(&s, ORIGIN).is_empty(), "nothing in the channel");

        assert!(slash(&s, "0f3 deny").await.starts_with(TOO_SHORT));
        assert_eq!(slash(&s, "0f3c0000 deny").await, not_shown("slack"));
        assert_eq!(approval(&s.server, HIDDEN).await["state"], "pending");
        assert_eq!(slash(&s, "0f3c deny").await, LISTED);

        s.say(APPROVER, "/approve 0f3c9a1e deny").await;
        assert_eq!(settled(&s.server, SHOWN).await["decision"], "deny");
    }

    #[tokio::test]
    async fn slack_decides_undelivered_approvals_when_configured() {
        let s = Slack::start(
            &format!("approvers: ['{APPROVER}'], {FILTER}, decideUndelivered: true"),
            true,
        )
        .await;
        let _operator = s.server.ws(OPERATOR).await;
        three_approvals(&s.server).await;
        assert!(
            slash(&s, "0f3c0000 deny").await.starts_with("Denied"),
            "decided"
        );
        assert_eq!(settled(&s.server, HIDDEN).await["decision"], "deny");
    }
}
