//! Issue 35, "the bot answers `/start`", on every platform: a person who writes to the bot
//! learns the id Gatehouse knows them by and whether they are an approver; a stranger also
//! learns the config key that would make them one, and nothing about approvals, even while one
//! is pending. A flood of `/start` from strangers gets one answer (`strangerReplies`).

use serde_json::json;

use crate::chat_support::{eventually, request};

/// Messages each flooding stranger sends.
const FLOOD: usize = 30;

/// Checks a stranger's answer: their id, the key, and no trace of `pending`.
fn assert_not_approver(answer: &str, channel: &str, id: &str, pending: &str) {
    assert!(
        answer.contains(&format!("Your user id on {channel} is {id}.")),
        "{answer}"
    );
    assert!(answer.contains("You are not an approver"), "{answer}");
    assert!(
        answer.contains(&format!(
            "adds {id} to channels.{channel}.execApprovals.approvers"
        )),
        "{answer}"
    );
    assert!(
        !answer.contains(&pending[..8]),
        "leaks the approval: {answer}"
    );
    assert!(
        !answer.contains("make deploy"),
        "leaks the command: {answer}"
    );
}

/// Lets the gateway answer anything still on its way before a count is taken.
async fn settle() {
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
}

mod telegram {
    use super::*;
    use crate::telegram::{APPROVER, STRANGER, Telegram, replies_to, wait_replies};

    const GROUP: i64 = -600;

    #[tokio::test]
    async fn telegram_start_tells_each_person_their_id_and_standing() {
        let t = Telegram::start(&format!("approvers: [{APPROVER}]"), "").await;
        let id = t.request(json!({})).await;
        t.calls("sendMessage", 1).await;

        t.say(APPROVER, "/start").await;
        let answer = eventually("the approver's answer", async || {
            replies_to(&t.fake, APPROVER)
                .into_iter()
                .find(|reply| reply.contains("Your user id"))
        })
        .await;
        assert!(
            answer.contains("Your user id on telegram is 4242."),
            "{answer}"
        );
        assert!(
            answer.contains(
                "You are an approver on this channel: approval cards come to your direct \
                 messages with this bot."
            ),
            "{answer}"
        );

        // A deep link's `/start <payload>`, addressed to this bot by name.
        t.say(STRANGER, "/start@gatehouse_fake_bot invite-42").await;
        let answer = wait_replies(&t.fake, STRANGER, 1).await.remove(0);
        assert_not_approver(&answer, "telegram", &STRANGER.to_string(), &id);

        // Not anyone's own words, so no command: a forwarded `/start`, a bot's.
        let quiet = STRANGER + 2;
        t.inject(
            json!({"message": {"from": {"id": quiet}, "chat": {"id": quiet, "type": "private"},
            "text": "/start", "forward_origin": {"type": "user", "date": 1,
                "sender_user": {"id": 5151, "is_bot": false, "first_name": "Mallory"}}}}),
        )
        .await;
        t.inject(
            json!({"message": {"from": {"id": 6060, "is_bot": true, "first_name": "Bot"},
            "chat": {"id": GROUP, "type": "group"}, "text": "/start"}}),
        )
        .await;

        // In a group: another bot's `/start` is not ours; `/help` is.
        t.in_group(GROUP, STRANGER + 1, "/start@otherbot").await;
        t.in_group(GROUP, STRANGER + 1, "/HELP").await;
        let answer = wait_replies(&t.fake, GROUP, 1).await.remove(0);
        assert_not_approver(&answer, "telegram", &(STRANGER + 1).to_string(), &id);
        settle().await;
        assert_eq!(replies_to(&t.fake, GROUP).len(), 1);
        assert_eq!(replies_to(&t.fake, quiet), Vec::<String>::new());
    }

    /// The guide's "find your id" step: the bot answers before anyone is an approver.
    #[tokio::test]
    async fn telegram_start_answers_before_any_approver_is_configured() {
        let t = Telegram::start("", "").await;
        t.say(APPROVER, "/start").await;
        let answer = wait_replies(&t.fake, APPROVER, 1).await.remove(0);
        assert!(
            answer.contains("an operator adds 4242 to channels.telegram.execApprovals.approvers"),
            "{answer}"
        );
    }

    #[tokio::test]
    async fn telegram_answers_a_flood_of_start_once() {
        let t = Telegram::start(&format!("approvers: [{APPROVER}]"), "").await;
        for _ in 0..FLOOD {
            t.say(STRANGER, "/start").await;
            t.in_group(GROUP, STRANGER + 1, "/start").await;
        }
        // Approvers are never held back, in the flooded group too.
        t.in_group(GROUP, APPROVER, "/start").await;
        wait_replies(&t.fake, GROUP, 2).await;
        settle().await;
        assert_eq!(replies_to(&t.fake, STRANGER).len(), 1);
        let group = replies_to(&t.fake, GROUP);
        assert_eq!(group.len(), 2, "{group:?}");
        assert_eq!(
            group
                .iter()
                .filter(|answer| answer.contains("You are an approver"))
                .count(),
            1,
            "{group:?}"
        );
    }
}

mod discord {
    use gatehouse_fakes::discord::BOT_ID;

    use super::*;
    use crate::discord::{APPROVER, Discord, ORIGIN, STRANGER, from_origin, posted};
    use crate::discord::{ephemeral_replies, wait_for_replies};

    #[tokio::test]
    async fn discord_start_tells_each_person_their_id_and_standing() {
        let d = Discord::start(&format!("approvers: ['{APPROVER}'], target: 'channel'")).await;
        let registered = &d.calls("bulkOverwriteGuildCommands", 1).await[0];
        let names: Vec<&str> = registered
            .body
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert!(
            names.contains(&"start") && names.contains(&"help"),
            "{names:?}"
        );
        let id = request(&d.server, from_origin()).await;
        d.cards(&ORIGIN.to_string(), 1).await;

        // The approver's `/start` application command, answered privately.
        d.inject(
            "INTERACTION_CREATE",
            json!({"type": 2, "channel_id": ORIGIN.to_string(),
                "user": {"id": APPROVER.to_string()}, "data": {"name": "start", "type": 1}}),
        )
        .await;
        let answer = wait_for_replies(&d.fake, 1).await.remove(0);
        assert!(
            answer.contains("Your user id on discord is 5000."),
            "{answer}"
        );
        assert!(
            answer.contains("approval cards come to the chat each request came from."),
            "{answer}"
        );

        // A stranger's bare `start` in their DM with the bot.
        let dm = d.dm(STRANGER).await;
        d.inject(
            "MESSAGE_CREATE",
            json!({"channel_id": dm, "author": {"id": STRANGER.to_string()}, "content": "start"}),
        )
        .await;
        let answer = eventually("the DM answer", async || posted(&d, &dm).into_iter().next()).await;
        assert_not_approver(&answer, "discord", &STRANGER.to_string(), &id);

        // A webhook's `/start` is no one's command.
        let origin = ORIGIN.to_string();
        d.inject(
            "MESSAGE_CREATE",
            json!({"channel_id": origin, "author": {"id": "7777", "bot": true},
                "webhook_id": "55", "content": format!("<@{BOT_ID}> /start")}),
        )
        .await;

        // Another stranger mentions the bot in the guild channel with `/help`.
        d.inject(
            "MESSAGE_CREATE",
            json!({"channel_id": origin, "author": {"id": (STRANGER + 1).to_string()},
                "content": format!("<@{BOT_ID}> /help")}),
        )
        .await;
        let answer = eventually("the public answer", async || {
            posted(&d, &origin).into_iter().next()
        })
        .await;
        assert_not_approver(&answer, "discord", &(STRANGER + 1).to_string(), &id);
        settle().await;
        assert_eq!(posted(&d, &origin).len(), 1);
        assert_eq!(ephemeral_replies(&d.fake).len(), 1);
    }

    #[tokio::test]
    async fn discord_answers_a_flood_of_start_once() {
        let d = Discord::start(&format!("approvers: ['{APPROVER}']")).await;
        let dm = d.dm(STRANGER).await;
        for _ in 0..FLOOD {
            d.inject(
                "MESSAGE_CREATE",
                json!({"channel_id": dm, "author": {"id": STRANGER.to_string()},
                    "content": "/start"}),
            )
            .await;
        }
        let approver_dm = d.dm(APPROVER).await;
        d.inject(
            "MESSAGE_CREATE",
            json!({"channel_id": approver_dm, "author": {"id": APPROVER.to_string()},
                "content": "/start"}),
        )
        .await;
        eventually("the approver's answer", async || {
            posted(&d, &approver_dm).into_iter().next()
        })
        .await;
        settle().await;
        let answers = posted(&d, &dm);
        assert_eq!(answers.len(), 1, "{answers:?}");
    }
}

mod slack {
    use gatehouse_fakes::Call;

    use super::*;
    use crate::slack::{APPROVER, ORIGIN, STRANGER, Slack};

    /// What the bot posted into `user`'s DM (the channel [`Slack::say`] writes in).
    fn dm_answers(s: &Slack, user: &str) -> Vec<String> {
        let dm = format!("D{user}");
        s.fake
            .calls()
            .into_iter()
            .filter(|c: &Call| c.method == "chat.postMessage" && c.body["channel"] == dm)
            .map(|c| c.body["text"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    #[tokio::test]
    async fn slack_start_tells_each_person_their_id_and_standing() {
        let s = Slack::start(&format!("approvers: ['{APPROVER}']"), false).await;
        let id = request(&s.server, json!({})).await;
        s.cards(APPROVER, 1).await;

        s.say(APPROVER, "start").await;
        let answer = eventually("the approver's answer", async || {
            dm_answers(&s, APPROVER).pop()
        })
        .await;
        assert!(
            answer.contains("Your user id on slack is U0ALICE."),
            "{answer}"
        );
        assert!(answer.contains("You are an approver"), "{answer}");

        s.say(STRANGER, "Help").await;
        let answer = eventually("the stranger's answer", async || {
            dm_answers(&s, STRANGER).pop()
        })
        .await;
        assert_not_approver(&answer, "slack", STRANGER, &id);

        // The bare word typed into a channel is ordinary chat.
        s.inject(
            json!({"type": "events_api", "payload": {"event": {"type": "message",
            "channel": ORIGIN, "channel_type": "channel", "user": "U0TRENT", "text": "help"}}}),
        )
        .await;
        settle().await;
        assert_eq!(s.ephemerals("U0TRENT"), Vec::<String>::new());

        // The slash form after a mention of the bot is answered, privately.
        s.inject(
            json!({"type": "events_api", "payload": {"event": {"type": "message",
            "channel": ORIGIN, "channel_type": "channel", "user": "U0TRENT",
            "text": "<@U0FAKEBOT> /start"}}}),
        )
        .await;
        let answer = eventually("the ephemeral answer", async || {
            s.ephemerals("U0TRENT").pop()
        })
        .await;
        assert_not_approver(&answer, "slack", "U0TRENT", &id);
    }

    #[tokio::test]
    async fn slack_answers_a_flood_of_start_once() {
        let s = Slack::start(&format!("approvers: ['{APPROVER}']"), false).await;
        for _ in 0..FLOOD {
            s.say(STRANGER, "start").await;
        }
        s.say(APPROVER, "start").await;
        s.say(APPROVER, "help").await;
        eventually("the approver's answers", async || {
            (dm_answers(&s, APPROVER).len() == 2).then_some(())
        })
        .await;
        settle().await;
        assert_eq!(dm_answers(&s, STRANGER).len(), 1);
    }
}
