//! Issue 36, "who is speaking", on every platform: only a person's own words, typed in the
//! bot's own workspace or guild, are a command. A forwarded message, one sent on behalf of a
//! chat (Telegram's anonymous admins and channels), a webhook's or an app's post, a system
//! message and a command from another Slack workspace decide nothing, even when they carry an
//! approver's id; the approver's own command right after them decides.

use serde_json::{Value, json};

use crate::chat_support::{request, settled};

/// What each refused message tries, and what the approver's own command then decides.
fn deny(id: &str) -> String {
    format!("/approve {} deny", &id[..8])
}

fn allow(id: &str) -> String {
    format!("/approve {} allow-once", &id[..8])
}

mod telegram {
    use super::*;
    use crate::telegram::{APPROVER, Telegram, replies_to};

    const GROUP: i64 = -1_001_500;

    #[tokio::test]
    async fn telegram_reads_no_forwarded_or_on_behalf_message_as_a_command() {
        let t = Telegram::start(&format!("approvers: [{APPROVER}]"), "").await;
        let id = t.request(json!({})).await;
        t.calls("sendMessage", 1).await;
        let alice = json!({"id": APPROVER, "is_bot": false, "first_name": "Alice"});
        let group = json!({"id": GROUP, "type": "supergroup", "title": "ops"});
        let not_their_own = [
            // The approver forwards someone else's command into their DM with the bot.
            json!({"from": alice, "chat": {"id": APPROVER, "type": "private"}, "text": deny(&id),
                "forward_origin": {"type": "user", "date": 1,
                    "sender_user": {"id": 5151, "is_bot": false, "first_name": "Mallory"}}}),
            // An anonymous admin of a group: `from` is Telegram's shared GroupAnonymousBot.
            json!({"from": {"id": 1_087_968_824_u64, "is_bot": true, "first_name": "Group",
                    "username": "GroupAnonymousBot"},
                "sender_chat": group, "chat": group, "text": deny(&id)}),
            // A post a linked channel forwarded into the group by itself.
            json!({"from": {"id": 777_000, "is_bot": false, "first_name": "Telegram"},
                "sender_chat": {"id": -1_009_999, "type": "channel", "title": "news"},
                "is_automatic_forward": true, "chat": group, "text": deny(&id)}),
            // The approver's own account, but the text composed by an inline bot.
            json!({"from": alice, "chat": group, "text": deny(&id),
                "via_bot": {"id": 6060, "is_bot": true, "first_name": "Inline"}}),
        ];
        for message in not_their_own {
            t.inject(json!({ "message": message })).await;
        }
        t.say(APPROVER, &allow(&id)).await;
        assert_eq!(t.settled(&id).await["decision"], "allow-once");
        assert_eq!(replies_to(&t.fake, GROUP), Vec::<String>::new());
    }
}

mod discord {
    use super::*;
    use crate::discord::{APPROVER, Discord};

    #[tokio::test]
    async fn discord_reads_only_a_persons_own_messages() {
        let d = Discord::start(&format!("approvers: ['{APPROVER}']")).await;
        let id = request(&d.server, json!({})).await;
        d.calls("createMessage", 1).await;
        let dm = d.dm(APPROVER).await;
        let not_their_own = [
            json!({"webhook_id": "4100"}),
            json!({"author": {"id": APPROVER.to_string(), "system": true}}),
            json!({"type": 7}),
            json!({"message_reference": {"type": 1, "message_id": "29", "channel_id": dm}}),
        ];
        for extra in not_their_own {
            let mut message = json!({"channel_id": dm, "author": {"id": APPROVER.to_string()},
                "content": deny(&id)});
            if let (Some(message), Some(extra)) = (message.as_object_mut(), extra.as_object()) {
                message.extend(extra.clone());
            }
            d.inject("MESSAGE_CREATE", message).await;
        }
        d.inject(
            "MESSAGE_CREATE",
            json!({"channel_id": dm, "author": {"id": APPROVER.to_string()},
                "content": allow(&id)}),
        )
        .await;
        assert_eq!(settled(&d.server, &id).await["decision"], "allow-once");
    }
}

mod slack {
    use super::*;
    use crate::slack::{APPROVER, ORIGIN, Slack};

    const ELSEWHERE: &str = "T0ELSEWHERE";

    #[tokio::test]
    async fn slack_reads_only_people_of_its_own_workspace() {
        let s = Slack::start(&format!("approvers: ['{APPROVER}']"), true).await;
        let id = request(&s.server, json!({})).await;
        s.calls("chat.postMessage", 1).await;
        let args = deny(&id).trim_start_matches("/approve ").to_owned();

        let answered = s
            .inject(
                json!({"type": "slash_commands", "payload": {"command": "/approve",
                "text": args, "user_id": APPROVER, "channel_id": ORIGIN,
                "team_id": ELSEWHERE}}),
            )
            .await;
        let body: Value =
            serde_json::from_str(answered["result"]["body"].as_str().unwrap_or_default()).unwrap();
        assert_eq!(
            body["text"],
            "Gatehouse answers only people of its own workspace."
        );
        // A member of another workspace in a shared channel, and an app posting as a user.
        let event = |extra: Value| {
            let mut event = json!({"type": "message", "channel": ORIGIN,
                "channel_type": "channel", "user": APPROVER, "ts": "1795000001.000100",
                "text": format!("<@U0FAKEBOT> {}", deny(&id).trim_start_matches('/'))});
            if let (Some(event), Some(extra)) = (event.as_object_mut(), extra.as_object()) {
                event.extend(extra.clone());
            }
            json!({"type": "events_api", "payload": {"event": event}})
        };
        s.inject(event(json!({"user_profile": {"team": ELSEWHERE}})))
            .await;
        s.inject(event(
            json!({"bot_profile": {"id": "B9", "name": "app", "app_id": "A9"}}),
        ))
        .await;
        // A press on the approver's card by someone Slack says belongs to another team.
        let card = s.cards(APPROVER, 1).await.remove(0);
        s.inject(
            json!({"type": "interactive", "payload": {"type": "block_actions",
            "user": {"id": APPROVER, "team_id": ELSEWHERE},
            "container": {"type": "message", "message_ts": card.message, "channel_id": card.chat},
            "actions": [{"type": "button", "action_id": "press", "value": card.button("deny")}]}}),
        )
        .await;
        s.say(APPROVER, &allow(&id)).await;
        assert_eq!(settled(&s.server, &id).await["decision"], "allow-once");
    }
}
