//! Slack events as the chat core's [`Inbound`]: pure translation, shared by Socket Mode and HTTP
//! mode. Nothing here parses commands or checks approvers; the core does, for every channel.

use gatehouse_chat::{ButtonPress, Inbound, InboundText, InteractionRef, MessageLocator};
use gatehouse_policy::elevated::SenderIdentity;
use slack_morphism::prelude::*;

use crate::classify::CHANNEL;
use crate::handle::Handle;
use crate::platform::place_of;

/// Slack's `channel_type` for a direct message.
const DIRECT_MESSAGE: &str = "im";

/// The workspace of the person who pressed: their own team when Slack names it (a person from
/// another workspace in a shared channel), else the workspace the press happened in.
pub(crate) fn press_team(event: &SlackInteractionBlockActionsEvent) -> &str {
    event
        .user
        .as_ref()
        .and_then(|user| user.team_id.as_ref())
        .map_or(event.team.id.0.as_str(), |team| team.0.as_str())
}

/// The workspace of a message's author: the team of its sender's profile when Slack includes
/// one (it does for people of another workspace in a shared channel), else `delivered_to`, the
/// workspace the event was delivered for.
pub(crate) fn message_team<'a>(event: &'a SlackMessageEvent, delivered_to: &'a str) -> &'a str {
    event
        .sender
        .user_profile
        .as_ref()
        .and_then(|profile| profile.team.as_ref())
        .map_or(delivered_to, |team| team.0.as_str())
}

/// A button press on a message. `None` for presses without a user, outside a message, or
/// without a value (another app's buttons); the core verifies the token itself.
pub(crate) fn press(
    event: &SlackInteractionBlockActionsEvent,
    account_id: Option<&str>,
) -> Option<Inbound> {
    let user = event.user.as_ref()?;
    let SlackInteractionActionContainer::Message(container) = &event.container else {
        return None;
    };
    let channel = container
        .channel_id
        .clone()
        .or_else(|| event.channel.as_ref().map(|c| c.id.clone()))?;
    let token = event
        .actions
        .as_ref()?
        .iter()
        .find_map(|action| action.value.clone())?;
    let thread_ts = event
        .message
        .as_ref()
        .and_then(|m| m.origin.thread_ts.as_ref())
        .filter(|thread| **thread != container.message_ts)
        .map(|thread| thread.0.clone());
    let handle = Handle::Press {
        channel: channel.0.clone(),
        user: user.id.0.clone(),
        thread_ts: thread_ts.clone(),
    };
    Some(Inbound::Press(ButtonPress {
        sender: SenderIdentity {
            channel: CHANNEL.to_owned(),
            id: user.id.0.clone(),
            username: user.username.clone(),
            name: user.name.clone(),
            ..SenderIdentity::default()
        },
        token,
        message: locator(account_id, &channel.0, &container.message_ts.0, thread_ts),
        interaction: InteractionRef {
            channel: CHANNEL.to_owned(),
            handle: handle.encode(),
        },
    }))
}

/// A message someone typed where the bot can read it. Edits, joins, bot posts (our own cards
/// included) and empty messages are not commands, so they are dropped here.
pub(crate) fn message(
    event: &SlackMessageEvent,
    bot_user_id: Option<&str>,
    account_id: Option<&str>,
) -> Option<Inbound> {
    let sender = &event.sender;
    if event.subtype.is_some()
        || sender.bot_id.is_some()
        || sender.bot_profile.is_some()
        || sender.display_as_bot == Some(true)
    {
        return None;
    }
    let user = event.sender.user.as_ref()?;
    if Some(user.0.as_str()) == bot_user_id {
        return None;
    }
    let channel = event.origin.channel.as_ref()?;
    let text = event.content.as_ref()?.text.as_deref()?;
    let text = strip_bot_mention(text, bot_user_id);
    if text.is_empty() {
        return None;
    }
    let ts = &event.origin.ts.0;
    let thread = event.origin.thread_ts.as_ref().map(|t| t.0.clone());
    // A message in a card's thread answers that card, as a Telegram reply would.
    let reply_to = thread
        .as_ref()
        .filter(|parent| *parent != ts)
        .map(|parent| locator(account_id, &channel.0, parent, None));
    let is_direct = event
        .origin
        .channel_type
        .as_ref()
        .is_some_and(|kind| kind.0 == DIRECT_MESSAGE);
    // In a shared conversation, an ephemeral message beside the command reaches its sender
    // alone; in a DM every reply already does.
    let private_reply = (!is_direct).then(|| InteractionRef {
        channel: CHANNEL.to_owned(),
        handle: Handle::Press {
            channel: channel.0.clone(),
            user: user.0.clone(),
            thread_ts: thread.clone(),
        }
        .encode(),
    });
    let place = place_of(
        &channel.0,
        thread.as_deref().filter(|parent| *parent != ts),
        is_direct.then_some(user.0.as_str()),
    );
    Some(Inbound::Text(InboundText {
        sender: SenderIdentity {
            channel: CHANNEL.to_owned(),
            id: user.0.clone(),
            username: event.sender.username.clone(),
            ..SenderIdentity::default()
        },
        place,
        message: locator(account_id, &channel.0, ts, thread),
        text: text.to_owned(),
        reply_to,
        is_direct,
        interaction: None,
        private_reply,
    }))
}

/// A slash command, joined back into one line (`/approve 0f3c9a1e deny`) so it meets the same
/// grammar as typed text. It has no message, so the locator carries the `trigger_id`.
pub(crate) fn command(event: &SlackCommandEvent, account_id: Option<&str>) -> Inbound {
    let args = event.text.as_deref().unwrap_or_default().trim();
    let text = if args.is_empty() {
        event.command.0.clone()
    } else {
        format!("{} {args}", event.command.0)
    };
    let handle = Handle::Command {
        key: event.trigger_id.0.clone(),
        response_url: event.response_url.0.to_string(),
    };
    // Slack sends a slash command without its thread: it reaches the conversation only.
    let is_direct = event.channel_id.0.starts_with('D');
    Inbound::Text(InboundText {
        sender: SenderIdentity {
            channel: CHANNEL.to_owned(),
            id: event.user_id.0.clone(),
            ..SenderIdentity::default()
        },
        place: place_of(
            &event.channel_id.0,
            None,
            is_direct.then_some(event.user_id.0.as_str()),
        ),
        message: locator(account_id, &event.channel_id.0, &event.trigger_id.0, None),
        text,
        reply_to: None,
        is_direct,
        interaction: Some(InteractionRef {
            channel: CHANNEL.to_owned(),
            handle: handle.encode(),
        }),
        private_reply: None,
    })
}

/// `<@U0BOT> approve …` in a channel reads as `approve …`; a mention of anyone else stays, so the
/// grammar sees it and does not mistake it for ours.
fn strip_bot_mention<'a>(text: &'a str, bot_user_id: Option<&str>) -> &'a str {
    let text = text.trim();
    let Some(bot) = bot_user_id else {
        return text;
    };
    let mention = format!("<@{bot}>");
    text.strip_prefix(&mention)
        .map(|rest| rest.trim_start_matches(':').trim())
        .unwrap_or(text)
}

fn locator(
    account_id: Option<&str>,
    chat_id: &str,
    message_id: &str,
    thread_id: Option<String>,
) -> MessageLocator {
    MessageLocator {
        channel: CHANNEL.to_owned(),
        account_id: account_id.map(str::to_owned),
        chat_id: chat_id.to_owned(),
        message_id: message_id.to_owned(),
        thread_id,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn message_event(value: serde_json::Value) -> SlackMessageEvent {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn strips_only_our_own_mention() {
        assert_eq!(
            strip_bot_mention("<@UBOT> approve a deny", Some("UBOT")),
            "approve a deny"
        );
        assert_eq!(
            strip_bot_mention("<@UBOT>: approve a deny", Some("UBOT")),
            "approve a deny"
        );
        assert_eq!(
            strip_bot_mention("<@UX> approve a deny", Some("UBOT")),
            "<@UX> approve a deny"
        );
    }

    #[test]
    fn denies_bot_posts_and_edits_as_commands() {
        let bot = message_event(json!({"type": "message", "channel": "C1", "ts": "1.1",
            "user": "UBOT", "bot_id": "B1", "text": "/approve a deny"}));
        assert_eq!(message(&bot, Some("UBOT"), None), None);
        let edit = message_event(json!({"type": "message", "subtype": "message_changed",
            "channel": "C1", "ts": "1.2", "user": "U1", "text": "approve a deny"}));
        assert_eq!(message(&edit, Some("UBOT"), None), None);
    }

    /// Issue 36: an app posting as a person (`bot_profile`, `display_as_bot`) is no person.
    #[test]
    fn denies_app_posts_that_carry_a_user_id() {
        for sender in [
            json!({"user": "U1", "bot_profile": {"id": "B1", "name": "app", "app_id": "A9"}}),
            json!({"user": "U1", "display_as_bot": true}),
        ] {
            let mut value = json!({"type": "message", "channel": "C1", "ts": "1.3",
                "text": "approve 0f3c9a1e deny"});
            value
                .as_object_mut()
                .unwrap()
                .extend(sender.as_object().unwrap().clone());
            assert_eq!(message(&message_event(value), Some("UBOT"), None), None);
        }
    }

    /// Issue 36: the workspace a person belongs to is theirs when Slack names it (a shared
    /// channel), else the one the event was delivered for.
    #[test]
    fn reads_the_senders_own_workspace() {
        let local = message_event(json!({"type": "message", "channel": "C1", "ts": "1.4",
            "user": "U1", "text": "hi"}));
        assert_eq!(message_team(&local, "T0HOME"), "T0HOME");
        let external = message_event(json!({"type": "message", "channel": "C1", "ts": "1.5",
            "user": "U9", "text": "hi", "user_profile": {"team": "T0OTHER"}}));
        assert_eq!(message_team(&external, "T0HOME"), "T0OTHER");
        let press = |user: serde_json::Value| -> SlackInteractionBlockActionsEvent {
            serde_json::from_value(json!({"type": "block_actions",
                "team": {"id": "T0HOME"}, "user": user, "api_app_id": "A1",
                "container": {"type": "message", "message_ts": "1.0", "channel_id": "C1"},
                "trigger_id": "t1"}))
            .unwrap()
        };
        assert_eq!(press_team(&press(json!({"id": "U1"}))), "T0HOME");
        assert_eq!(
            press_team(&press(json!({"id": "U9", "team_id": "T0OTHER"}))),
            "T0OTHER"
        );
    }

    #[test]
    fn treats_a_thread_message_as_a_reply_to_its_parent() {
        let event = message_event(
            json!({"type": "message", "channel": "C1", "channel_type": "channel",
            "ts": "2.0", "thread_ts": "1.0", "user": "U1", "text": "deny"}),
        );
        let Some(Inbound::Text(text)) = message(&event, Some("UBOT"), None) else {
            panic!("no text")
        };
        assert_eq!(text.reply_to.unwrap().message_id, "1.0");
        assert_eq!(text.message.thread_id.as_deref(), Some("1.0"));
        assert!(!text.is_direct);
    }
}
