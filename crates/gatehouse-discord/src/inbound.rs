//! Discord events as the chat core's [`Inbound`] events: pure translations, so each rule
//! (who the sender is, which locator a press carries, what text a command stands for) is
//! testable without a gateway.

use gatehouse_chat::{ButtonPress, Inbound, InboundText, InteractionRef, MessageLocator};
use gatehouse_policy::elevated::SenderIdentity;
use serenity::all::{
    ChannelId, CommandInteraction, ComponentInteraction, ComponentInteractionDataKind, GuildId,
    Message, MessageReferenceKind, MessageType, PartialChannel, User, UserId,
};

use crate::classify::CHANNEL;
use crate::commands::command_text;
use crate::platform::place_of;
use crate::threads::is_thread;

/// What a translation needs to know about this bot.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    /// The account name copied into locators; must match what `send` put there, or tokens
    /// bound to a delivery would not verify.
    pub(crate) account_id: Option<String>,
    /// The bot's own user id, to strip a leading mention of it.
    pub(crate) bot_user_id: UserId,
    /// `guildIds`: when listed, the only guilds whose people this bot hears; empty, every
    /// guild it was added to.
    pub(crate) guilds: Vec<u64>,
}

impl Context {
    /// Whether something from `guild` (`None`: a DM) comes from where this bot serves.
    fn serves(&self, guild: Option<GuildId>) -> bool {
        match guild {
            Some(guild) => self.guilds.is_empty() || self.guilds.contains(&guild.get()),
            None => true,
        }
    }

    fn locator(&self, chat: ChannelId, message: u64, thread: Option<ChannelId>) -> MessageLocator {
        MessageLocator {
            channel: CHANNEL.to_owned(),
            account_id: self.account_id.clone(),
            chat_id: chat.to_string(),
            message_id: message.to_string(),
            thread_id: thread.map(|thread| thread.to_string()),
        }
    }
}

/// A text message, unless it does not speak for a person ([`not_a_persons_own`]) or carries
/// no text. A leading mention of this bot is dropped, so `@Gatehouse /approve …` reads as
/// `/approve …` (mentions are readable without the MESSAGE_CONTENT intent). `parent` is the
/// channel of the thread it was typed in, when it was typed in one.
pub(crate) fn from_message(
    message: &Message,
    parent: Option<ChannelId>,
    ctx: &Context,
) -> Option<Inbound> {
    if let Some(reason) = not_a_persons_own(message, ctx) {
        tracing::debug!(
            target: "security",
            channel = CHANNEL,
            message = %message.id,
            reason,
            "discord message not read as a command"
        );
        return None;
    }
    let text = strip_own_mention(&message.content, ctx.bot_user_id).trim();
    if text.is_empty() {
        return None;
    }
    let reply_to = message.message_reference.as_ref().and_then(|reference| {
        reference
            .message_id
            .map(|id| ctx.locator(reference.channel_id, id.get(), None))
    });
    let channel = message.channel_id.to_string();
    let author = message.author.id.to_string();
    let parent = parent.map(|parent| parent.to_string());
    let dm_with = message.guild_id.is_none().then_some(author.as_str());
    Some(Inbound::Text(InboundText {
        sender: sender(&message.author),
        place: place_of(&channel, dm_with, parent.as_deref()),
        message: ctx.locator(message.channel_id, message.id.get(), None),
        text: text.to_owned(),
        reply_to,
        is_direct: message.guild_id.is_none(),
        interaction: None,
        // Discord answers privately only an interaction (a slash command), never a message.
        private_reply: None,
    }))
}

/// Why `message` is not a person's own words here, when it is not: sent by a bot (this one
/// included), a webhook or Discord itself, a system message (a join, a pin, a thread's
/// start), a forward of someone else's message, or typed in a guild this bot is not configured
/// for. None of them is ever a command.
fn not_a_persons_own(message: &Message, ctx: &Context) -> Option<&'static str> {
    let author = &message.author;
    if author.bot || author.system || message.webhook_id.is_some() || author.id == ctx.bot_user_id {
        Some("sent by a bot, a webhook or Discord itself")
    } else if !matches!(
        message.kind,
        MessageType::Regular | MessageType::InlineReply
    ) {
        Some("a system message")
    } else if message
        .message_reference
        .as_ref()
        .is_some_and(|reference| reference.kind != MessageReferenceKind::Default)
    {
        Some("forwarded: the text is not the forwarder's")
    } else if !ctx.serves(message.guild_id) {
        Some("from a guild not in guildIds")
    } else {
        None
    }
}

/// A button press; other components are not ours, nor presses from a guild not served.
pub(crate) fn from_component(
    press: &ComponentInteraction,
    interaction: InteractionRef,
    ctx: &Context,
) -> Option<Inbound> {
    if !matches!(press.data.kind, ComponentInteractionDataKind::Button)
        || press.user.bot
        || !ctx.serves(press.guild_id)
    {
        return None;
    }
    let thread = thread_of(press.channel.as_ref(), press.channel_id);
    Some(Inbound::Press(ButtonPress {
        sender: sender(&press.user),
        token: press.data.custom_id.clone(),
        message: ctx.locator(press.channel_id, press.message.id.get(), thread),
        interaction,
    }))
}

/// `/approve` or `/elevated` as its text form; `None` for a command that is not ours. A
/// command has no message, so the locator carries the interaction id.
pub(crate) fn from_command(
    command: &CommandInteraction,
    interaction: InteractionRef,
    ctx: &Context,
) -> Option<Inbound> {
    if command.user.bot || !ctx.serves(command.guild_id) {
        return None;
    }
    let text = command_text(&command.data)?;
    let thread = thread_of(command.channel.as_ref(), command.channel_id);
    let channel = command.channel_id.to_string();
    let user = command.user.id.to_string();
    let parent = thread
        .and(command.channel.as_ref())
        .and_then(|partial| partial.parent_id)
        .map(|parent| parent.to_string());
    let dm_with = command.guild_id.is_none().then_some(user.as_str());
    Some(Inbound::Text(InboundText {
        sender: sender(&command.user),
        place: place_of(&channel, dm_with, parent.as_deref()),
        message: ctx.locator(command.channel_id, command.id.get(), thread),
        text,
        reply_to: None,
        is_direct: command.guild_id.is_none(),
        interaction: Some(interaction),
        private_reply: None,
    }))
}

/// The sender with every identity Discord gives: the id decides, names are informational.
fn sender(user: &User) -> SenderIdentity {
    SenderIdentity {
        channel: CHANNEL.to_owned(),
        id: user.id.to_string(),
        from: None,
        e164: None,
        name: user.global_name.clone(),
        username: Some(user.name.clone()),
        tag: Some(user.tag()),
    }
}

fn strip_own_mention(text: &str, bot: UserId) -> &str {
    let trimmed = text.trim_start();
    [format!("<@{bot}>"), format!("<@!{bot}>")]
        .iter()
        .find_map(|mention| trimmed.strip_prefix(mention.as_str()))
        .unwrap_or(text)
}

fn thread_of(channel: Option<&PartialChannel>, id: ChannelId) -> Option<ChannelId> {
    is_thread(channel?.kind).then_some(id)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    const BOT: u64 = 900;

    fn ctx() -> Context {
        Context {
            account_id: Some("ops".into()),
            bot_user_id: UserId::new(BOT),
            guilds: vec![10],
        }
    }

    fn message(author: serde_json::Value, content: &str, guild: bool) -> Message {
        let mut value = json!({
            "id": "30", "channel_id": "20", "author": author, "content": content,
            "timestamp": "2026-11-21T00:00:00.000000+00:00", "edited_timestamp": null,
            "tts": false, "mention_everyone": false, "mentions": [], "mention_roles": [],
            "attachments": [], "embeds": [], "pinned": false, "type": 0,
            "message_reference": {"message_id": "29", "channel_id": "20"}
        });
        if guild {
            value["guild_id"] = json!("10");
        }
        serde_json::from_value(value).unwrap()
    }

    fn alice() -> serde_json::Value {
        json!({"id": "5000", "username": "alice", "discriminator": "0", "global_name": "Alice", "avatar": null})
    }

    #[test]
    fn reads_a_guild_mention_as_the_command_with_reply_target() {
        let text = from_message(
            &message(alice(), "<@900>  /approve 0f3c deny", true),
            None,
            &ctx(),
        );
        let Some(Inbound::Text(text)) = text else {
            panic!("{text:?}")
        };
        assert_eq!(text.text, "/approve 0f3c deny");
        assert!(!text.is_direct);
        assert_eq!(text.sender.id, "5000");
        assert_eq!(text.sender.username.as_deref(), Some("alice"));
        assert_eq!(text.sender.name.as_deref(), Some("Alice"));
        assert_eq!(text.message.chat_id, "20");
        assert_eq!(text.message.account_id.as_deref(), Some("ops"));
        assert_eq!(text.reply_to.map(|r| r.message_id).as_deref(), Some("29"));
    }

    #[test]
    fn ignores_bots_and_empty_messages() {
        let bot = json!({"id": "77", "username": "other", "discriminator": "0", "avatar": null, "bot": true});
        assert_eq!(
            from_message(&message(bot, "/approve x deny", false), None, &ctx()),
            None
        );
        assert_eq!(
            from_message(&message(alice(), "<@900>", false), None, &ctx()),
            None
        );
    }

    /// One mark on a message, named.
    type Mark = (&'static str, fn(&mut serde_json::Value));

    /// Every way a message can be something other than a person's own words here.
    const NOT_THEIR_OWN: [Mark; 6] = [
        ("webhook", |m| m["webhook_id"] = json!("4000")),
        ("system author", |m| m["author"]["system"] = json!(true)),
        ("member join", |m| m["type"] = json!(7)),
        ("thread starter", |m| m["type"] = json!(21)),
        (
            "forward",
            |m| m["message_reference"] = json!({"type": 1, "message_id": "29", "channel_id": "20"}),
        ),
        ("other guild", |m| m["guild_id"] = json!("11")),
    ];

    /// Issue 36, exhaustively: a message is a command exactly when none of the marks of
    /// something other than a person's own words, in a served guild, is on it.
    #[test]
    fn reads_only_a_persons_own_words_from_a_served_guild() {
        for mask in 0..(1_u32 << NOT_THEIR_OWN.len()) {
            let mut value =
                serde_json::to_value(message(alice(), "/approve 0f3c9a1e deny", true)).unwrap();
            let mut marks = Vec::new();
            for (bit, (what, mark)) in NOT_THEIR_OWN.iter().enumerate() {
                if mask & (1 << bit) != 0 {
                    mark(&mut value);
                    marks.push(*what);
                }
            }
            let message: Message = serde_json::from_value(value).unwrap();
            let read = from_message(&message, None, &ctx()).is_some();
            assert_eq!(read, marks.is_empty(), "{marks:?}");
        }
    }

    #[test]
    fn reads_replies_and_every_guild_when_none_is_listed() {
        let mut reply = serde_json::to_value(message(alice(), "/approve 0f3c deny", true)).unwrap();
        reply["type"] = json!(19);
        let reply: Message = serde_json::from_value(reply).unwrap();
        assert!(from_message(&reply, None, &ctx()).is_some());
        let mut elsewhere =
            serde_json::to_value(message(alice(), "/approve 0f3c deny", true)).unwrap();
        elsewhere["guild_id"] = json!("11");
        let elsewhere: Message = serde_json::from_value(elsewhere).unwrap();
        let mut anywhere = ctx();
        anywhere.guilds.clear();
        assert!(from_message(&elsewhere, None, &anywhere).is_some());
    }

    #[test]
    fn keeps_another_users_mention() {
        let Some(Inbound::Text(text)) =
            from_message(&message(alice(), "<@901> hi", false), None, &ctx())
        else {
            panic!()
        };
        assert_eq!(text.text, "<@901> hi");
        assert!(text.is_direct);
    }
}
