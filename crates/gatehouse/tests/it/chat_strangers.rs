//! Issue 36, "strangers cannot slow approvals down", on every platform: a flood of commands
//! from people who may decide nothing gets one answer (privately where the platform can), the
//! shared chat stays quiet, and a card for that very chat goes out right behind it, by the
//! order of the calls the fake recorded. People who may decide are answered as always.
//!
//! Before: 120 messages from a stranger in a Slack channel held a new card back past its
//! approval's timeout, each reply taking its turn ahead of the card.

use serde_json::json;

use crate::chat_support::{WAIT, eventually, request};

/// Messages each flooding stranger sends.
const FLOOD: usize = 40;

mod telegram {
    use super::*;
    use crate::telegram::{APPROVER, STRANGER, Telegram};

    const GROUP: i64 = -500;

    /// Every message the bot sent the group: (has buttons, text).
    fn sent_to_group(t: &Telegram) -> Vec<(bool, String)> {
        t.fake
            .calls_in_chat(&GROUP.to_string())
            .into_iter()
            .filter(|c| c.method == "sendMessage")
            .map(|c| {
                let buttons = c.body["reply_markup"]["inline_keyboard"].is_array();
                (
                    buttons,
                    c.body["text"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }

    #[tokio::test]
    async fn telegram_answers_a_flood_once_and_the_card_follows_at_once() {
        let t = Telegram::start(&format!("approvers: [{APPROVER}], target: 'channel'"), "").await;
        for _ in 0..FLOOD {
            t.in_group(GROUP, STRANGER, "/approve abcd1234 deny").await;
            t.in_group(GROUP, STRANGER + 1, "/elevated full").await;
        }
        // The approver's own command, after the flood, is answered in turn: every update
        // before it has been taken.
        t.in_group(GROUP, APPROVER, "/approve abcd1234 deny").await;
        eventually("the approver's answer", async || {
            sent_to_group(&t)
                .iter()
                .any(|(_, text)| text.contains("No pending approval matches"))
                .then_some(())
        })
        .await;

        request(
            &t.server,
            json!({"turnSource": {"channel": "telegram", "to": GROUP.to_string()}}),
        )
        .await;
        eventually("the card", async || {
            sent_to_group(&t)
                .iter()
                .any(|(buttons, _)| *buttons)
                .then_some(())
        })
        .await;
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let sent = sent_to_group(&t);
        let kinds: Vec<&str> = sent
            .iter()
            .map(|(buttons, text)| match (buttons, text) {
                (true, _) => "card",
                // Either stranger's refusal: their messages are handled concurrently, so
                // which of them is answered first is not fixed.
                (false, text)
                    if text.contains("not an approver")
                        || text.contains("Not authorized to change elevated mode") =>
                {
                    "stranger"
                }
                (false, text) if text.contains("No pending approval") => "approver",
                _ => "other",
            })
            .collect();
        // One answer to whichever stranger came first; none to the other (the group's quiet
        // window).
        assert_eq!(kinds, ["stranger", "approver", "card"], "{sent:?}");
    }
}

mod discord {
    use gatehouse_fakes::discord::BOT_ID;

    use super::*;
    use crate::discord::{APPROVER, Discord, ORIGIN, STRANGER, channel_of, wait_for_replies};

    #[tokio::test]
    async fn discord_answers_a_flood_once_and_the_card_follows_at_once() {
        let d = Discord::start(&format!("approvers: ['{APPROVER}'], target: 'channel'")).await;
        let origin = ORIGIN.to_string();
        let typed = |author: u64, text: &str| {
            json!({"channel_id": origin, "author": {"id": author.to_string()},
                "content": format!("<@{BOT_ID}> {text}")})
        };
        for _ in 0..FLOOD {
            d.inject("MESSAGE_CREATE", typed(STRANGER, "/approve abcd1234 deny"))
                .await;
        }
        d.inject("MESSAGE_CREATE", typed(APPROVER, "/approve abcd1234 deny"))
            .await;
        let contents = || -> Vec<String> {
            d.fake
                .calls()
                .into_iter()
                .filter(|c| c.method == "createMessage" && channel_of(c) == origin)
                .map(|c| match c.body["embeds"].as_array() {
                    Some(embeds) if !embeds.is_empty() => "card".to_owned(),
                    _ => c.body["content"].as_str().unwrap_or_default().to_owned(),
                })
                .collect()
        };
        eventually("the approver's answer", async || {
            contents()
                .iter()
                .any(|text| text.contains("No pending approval matches"))
                .then_some(())
        })
        .await;
        request(&d.server, crate::discord::from_origin()).await;
        eventually("the card", async || {
            contents().iter().any(|text| text == "card").then_some(())
        })
        .await;
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let sent = contents();
        assert_eq!(sent.len(), 3, "{sent:?}");
        assert!(sent[0].contains("not an approver"), "{sent:?}");
        assert_eq!(sent[2], "card", "{sent:?}");

        // A slash command is an interaction: its answer is private, and it is answered.
        d.inject(
            "INTERACTION_CREATE",
            json!({"type": 2, "channel_id": origin, "user": {"id": STRANGER.to_string()},
                "data": {"name": "approve", "type": 1, "options": [
                    {"name": "id", "type": 3, "value": "abcd1234"},
                    {"name": "decision", "type": 3, "value": "deny"}]}}),
        )
        .await;
        let private = wait_for_replies(&d.fake, 1).await;
        assert!(private[0].contains("not an approver"), "{private:?}");
    }
}

mod slack {
    use super::*;
    use crate::slack::{APPROVER, ORIGIN, STRANGER, Slack};

    #[tokio::test]
    async fn slack_answers_a_flood_once_privately_and_the_card_follows_at_once() {
        let s = Slack::start(
            &format!("approvers: ['{APPROVER}'], target: 'channel'"),
            false,
        )
        .await;
        let typed = |user: &str, text: &str| {
            json!({"type": "events_api", "payload": {"event": {"type": "message",
                "channel": ORIGIN, "channel_type": "channel", "user": user,
                "text": format!("<@U0FAKEBOT> {text}")}}})
        };
        for _ in 0..FLOOD {
            s.inject(typed(STRANGER, "approve abcd1234 deny")).await;
        }
        s.inject(typed(APPROVER, "approve abcd1234 deny")).await;
        let ephemerals = |user: &str| s.ephemerals(user);
        eventually("the approver's answer", async || {
            (!ephemerals(APPROVER).is_empty()).then_some(())
        })
        .await;
        request(
            &s.server,
            json!({"turnSource": {"channel": "slack", "to": ORIGIN}}),
        )
        .await;
        let posted = s
            .fake
            .wait_for_calls("chat.postMessage", 1, WAIT)
            .await
            .unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        assert_eq!(posted[0].body["channel"], ORIGIN);
        assert!(
            posted[0].body.to_string().contains("make deploy"),
            "the channel's first message is the card: {}",
            posted[0].body
        );
        let in_channel = s
            .fake
            .calls()
            .iter()
            .filter(|c| c.method == "chat.postMessage")
            .count();
        assert_eq!(in_channel, 1, "nothing but the card in the channel");
        assert_eq!(
            ephemerals(STRANGER),
            ["You are not an approver for exec approvals on this channel."]
        );
    }
}
