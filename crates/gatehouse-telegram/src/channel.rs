//! [`TelegramChannel`]: the chat core's [`Channel`] trait on teloxide's `Bot`. Each method is
//! one Bot API call; results and errors are translated, nothing is decided here.

use std::fmt;
use std::future::IntoFuture;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use gatehouse_chat::ChatError;
use gatehouse_chat::channel::{Channel, Inbound, InteractionRef};
use gatehouse_chat::commands::PressRefusal;
use gatehouse_chat::render::Card;
use gatehouse_chat::route::{Destination, MessageLocator, Route, SendKey};
use gatehouse_chat::sanitize::clip;
use gatehouse_chat::throttle::{Pacing, Window};
use gatehouse_config::Secret;
use teloxide::prelude::*;
use teloxide::types::{
    AllowedUpdate, CallbackQueryId, LinkPreviewOptions, MessageId, ParseMode, Recipient, ThreadId,
};
use teloxide::{ApiError, RequestError};
use tokio::sync::mpsc;

use crate::classify::{CHANNEL, classify, timed_out};
use crate::config::{TelegramConfig, UpdateMode};
use crate::error::TelegramError;
use crate::inbound::locator_of;
use crate::markup::{card_html, keyboard};
use crate::webhook::Intake;
use crate::{polling, webhook};

/// Telegram's limit on a callback answer, in characters.
const MAX_ANSWER_CHARS: usize = 200;

/// The updates the adapter asks for: text messages and button presses, nothing else.
pub(crate) const ALLOWED_UPDATES: [AllowedUpdate; 2] =
    [AllowedUpdate::Message, AllowedUpdate::CallbackQuery];

/// A connected Telegram bot, ready to send cards and to receive updates.
pub struct TelegramChannel {
    pub(crate) bot: Bot,
    token: Secret,
    bot_username: String,
    pub(crate) account_id: Option<String>,
    mode: UpdateMode,
    pub(crate) poll_timeout: Duration,
    pub(crate) call_timeout: Duration,
    max_connections: usize,
    /// The chat core's channel while `run` serves a hosted webhook.
    intake: Intake,
}

/// teloxide's `Bot` prints its token in `Debug`; this prints everything else.
impl fmt::Debug for TelegramChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TelegramChannel")
            .field("bot_username", &self.bot_username)
            .field("account_id", &self.account_id)
            .field("mode", &self.mode)
            .field("poll_timeout", &self.poll_timeout)
            .field("call_timeout", &self.call_timeout)
            .finish_non_exhaustive()
    }
}

impl TelegramChannel {
    /// Validates `config` and checks the token with `getMe`, so a wrong token or API URL fails
    /// at startup with a readable reason instead of on the first approval.
    pub async fn connect(config: TelegramConfig) -> Result<Self, TelegramError> {
        config.validate()?;
        // No overall client timeout: every call gets its own (`call_timeout`, or the poll
        // timeout plus `call_timeout` for `getUpdates`). The chat core's pacer lets at most
        // `max_connections` calls run at once, so no more connections than that (and the long
        // poll's) are ever opened; idle ones are kept as many, for a while.
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .tcp_nodelay(true)
            .pool_max_idle_per_host(config.max_connections)
            .pool_idle_timeout(Duration::from_secs(90))
            .build()
            .map_err(|error| TelegramError::InvalidConfig {
                field: "apiUrl",
                reason: format!("cannot build an HTTP client: {error}"),
            })?;
        let bot = Bot::with_client(config.bot_token.expose(), client).set_api_url(config.api_url);
        let mut channel = Self {
            bot,
            token: config.bot_token,
            bot_username: String::new(),
            account_id: config.account_id,
            mode: config.mode,
            poll_timeout: config.poll_timeout,
            call_timeout: config.call_timeout,
            max_connections: config.max_connections,
            intake: Intake::default(),
        };
        let me = channel
            .checked(channel.bot.get_me())
            .await
            .map_err(|source| TelegramError::Connect { source })?;
        channel.bot_username = me.username().to_owned();
        Ok(channel)
    }

    /// The webhook route for the host's own HTTP server, in [`UpdateMode::HostedWebhook`] only:
    /// it answers 503 until [`Channel::run`] has registered the webhook (or, on a gateway
    /// sharing its store with the holder, [`Channel::listen`] runs), so Telegram retries
    /// rather than losing an update.
    pub fn hosted_webhook_router(&self) -> Option<axum::Router> {
        let UpdateMode::HostedWebhook(hook) = &self.mode else {
            return None;
        };
        Some(webhook::router(
            &hook.path,
            hook.secret_token.clone(),
            self.account_id.clone(),
            Arc::clone(&self.intake),
        ))
    }

    /// The bot's username without `@`, for the core's `/approve@<bot>` check.
    pub fn bot_username(&self) -> &str {
        &self.bot_username
    }

    /// Runs one Bot API call, cut at `call_timeout`. The inner result is teloxide's, so callers
    /// can treat idempotent outcomes ("not modified", "already deleted") as success.
    pub(crate) async fn call<T>(
        &self,
        request: impl IntoFuture<Output = Result<T, RequestError>>,
    ) -> Result<Result<T, RequestError>, ChatError> {
        tokio::time::timeout(self.call_timeout, request.into_future())
            .await
            .map_err(|_| timed_out(self.call_timeout))
    }

    /// Maps a teloxide error onto the core's delivery classes.
    pub(crate) fn classify(&self, error: &RequestError) -> ChatError {
        classify(error, &self.token, &self.bot_username)
    }

    /// [`Self::call`] with teloxide's error classified too.
    pub(crate) async fn checked<T>(
        &self,
        request: impl IntoFuture<Output = Result<T, RequestError>>,
    ) -> Result<T, ChatError> {
        self.call(request)
            .await?
            .map_err(|error| self.classify(&error))
    }
}

#[async_trait]
impl Channel for TelegramChannel {
    fn name(&self) -> &str {
        CHANNEL
    }

    /// The Bot FAQ's limits: about one message a second in a chat, 20 a minute in a group,
    /// about 30 a second overall. Edits are counted with messages (Telegram documents no
    /// separate quota for them).
    fn pacing(&self) -> Pacing {
        Pacing {
            chat: Some(Window::per_second(1)),
            group: Some(Window::per_minute(20)),
            bot: Some(Window::per_second(30)),
            edits: None,
            max_in_flight: self.max_connections,
        }
    }

    /// Groups, supergroups and channels have negative ids (or a public `@name`).
    fn is_group(&self, destination: &Destination) -> bool {
        match destination {
            Destination::Dm(_) => false,
            Destination::Chat(chat) => chat.starts_with('-') || chat.starts_with('@'),
        }
    }

    /// Telegram has no idempotency key: the key is not sent.
    async fn send(
        &self,
        route: &Route,
        card: &Card,
        _key: &SendKey,
    ) -> Result<MessageLocator, ChatError> {
        let (recipient, thread) = match &route.destination {
            // A private chat's id is the user's id, so a DM needs no "open" call.
            Destination::Dm(user) => (Recipient::Id(ChatId(user_id(user)?)), None),
            Destination::Chat(chat) => (recipient(chat)?, route.thread_id.as_deref()),
        };
        let mut request = self
            .bot
            .send_message(recipient, card_html(card))
            .parse_mode(ParseMode::Html)
            .link_preview_options(no_preview());
        if let Some(thread) = thread {
            request = request.message_thread_id(ThreadId(message_id(thread)?));
        }
        if let Some(markup) = keyboard(card)? {
            request = request.reply_markup(markup);
        }
        let sent = self.checked(request).await?;
        Ok(locator_of(&sent, self.account_id.as_deref()))
    }

    async fn update(&self, message: &MessageLocator, card: &Card) -> Result<(), ChatError> {
        let mut request = self
            .bot
            .edit_message_text(
                ChatId(chat_id(&message.chat_id)?),
                message_id(&message.message_id)?,
                card_html(card),
            )
            .parse_mode(ParseMode::Html)
            .link_preview_options(no_preview());
        // Without `reply_markup` Telegram removes the keyboard, which is what a receipt wants.
        if let Some(markup) = keyboard(card)? {
            request = request.reply_markup(markup);
        }
        match self.call(request).await? {
            Ok(_) => Ok(()),
            // A retried edit whose first attempt landed: the message already shows the card.
            Err(RequestError::Api(ApiError::MessageNotModified)) => Ok(()),
            // Deleted (by a person, or a retried delete): nothing is left to show buttons.
            Err(RequestError::Api(ApiError::MessageToEditNotFound)) => Ok(()),
            Err(error) => Err(self.classify(&error)),
        }
    }

    async fn delete(&self, message: &MessageLocator) -> Result<(), ChatError> {
        let request = self.bot.delete_message(
            ChatId(chat_id(&message.chat_id)?),
            message_id(&message.message_id)?,
        );
        match self.call(request).await? {
            Ok(_) => Ok(()),
            // A retried delete whose first attempt landed: the message is gone either way.
            Err(RequestError::Api(ApiError::MessageToDeleteNotFound)) => Ok(()),
            Err(error) => Err(self.classify(&error)),
        }
    }

    async fn answer(&self, interaction: &InteractionRef, text: &str) -> Result<(), ChatError> {
        let request = self
            .bot
            .answer_callback_query(CallbackQueryId(interaction.handle.clone()))
            .text(clip(text, MAX_ANSWER_CHARS))
            .show_alert(is_refusal(text));
        self.checked(request).await.map(|_| ())
    }

    async fn run(&self, inbound: mpsc::Sender<Inbound>) -> Result<(), ChatError> {
        match &self.mode {
            UpdateMode::LongPolling => polling::run(self, inbound).await,
            UpdateMode::Webhook(hook) => webhook::run(self, hook, inbound).await,
            UpdateMode::HostedWebhook(hook) => {
                webhook::run_hosted(self, hook, &self.intake, inbound).await
            }
        }
    }

    /// The hosted webhook's updates, on a gateway not holding the chat connections; long
    /// polling and a webhook on a listener of its own are the holder's alone.
    async fn listen(&self, inbound: mpsc::Sender<Inbound>) -> Result<(), ChatError> {
        if let UpdateMode::HostedWebhook(_) = &self.mode {
            webhook::listen_hosted(&self.intake, inbound).await;
        } else {
            inbound.closed().await;
        }
        Ok(())
    }
}

/// Refusals are alerts the presser must dismiss: the buttons stay, so a toast that vanishes
/// could read as "nothing happened". Confirmations stay toasts.
fn is_refusal(text: &str) -> bool {
    let refusals = [
        PressRefusal::NotApprover,
        PressRefusal::Token(ChatError::TokenUnknown),
        PressRefusal::Token(ChatError::TokenExpired {
            approval_id: String::new(),
        }),
    ];
    refusals.iter().any(|refusal| refusal.text() == text)
}

/// Cuts `text` to `max` characters, marking the cut.
/// Cards can quote URLs from a command; Telegram must not fetch them for a preview.
fn no_preview() -> LinkPreviewOptions {
    LinkPreviewOptions {
        is_disabled: true,
        url: None,
        prefer_small_media: false,
        prefer_large_media: false,
        show_above_text: false,
    }
}

/// A chat id: numeric, or `@channelusername` for public channels and supergroups.
fn recipient(chat: &str) -> Result<Recipient, ChatError> {
    if chat.starts_with('@') && chat.len() > 1 {
        return Ok(Recipient::ChannelUsername(chat.to_owned()));
    }
    chat_id(chat).map(|id| Recipient::Id(ChatId(id)))
}

/// A user id, which is also the id of their private chat with the bot. Always positive: a
/// negative id is a group, and a DM route must never land in one.
fn user_id(value: &str) -> Result<i64, ChatError> {
    match chat_id(value)? {
        id if id > 0 => Ok(id),
        _ => Err(ChatError::Permanent {
            channel: CHANNEL.to_owned(),
            reason: format!("{value:?} is not a Telegram user id (a positive number)"),
        }),
    }
}

fn chat_id(value: &str) -> Result<i64, ChatError> {
    value.trim().parse().map_err(|_| ChatError::Permanent {
        channel: CHANNEL.to_owned(),
        reason: format!("{value:?} is not a Telegram chat or user id (a number)"),
    })
}

fn message_id(value: &str) -> Result<MessageId, ChatError> {
    value
        .trim()
        .parse()
        .map(MessageId)
        .map_err(|_| ChatError::Permanent {
            channel: CHANNEL.to_owned(),
            reason: format!("{value:?} is not a Telegram message or topic id (a number)"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_refusals_as_alerts_and_confirmations_as_toasts() {
        assert!(is_refusal(PressRefusal::NotApprover.text()));
        assert!(!is_refusal("Allowed once 0f3c9a1e."));
    }

    #[test]
    fn denies_dm_routes_to_group_ids() {
        assert!(user_id("-1001234567890").is_err());
        assert!(user_id("0").is_err());
        assert_eq!(user_id("4242"), Ok(4242));
    }

    #[test]
    fn denies_non_numeric_chat_ids() {
        assert!(chat_id("abc").is_err());
        assert_eq!(chat_id("-1001234567890"), Ok(-1_001_234_567_890));
        assert_eq!(
            recipient("@ops_channel"),
            Ok(Recipient::ChannelUsername("@ops_channel".into()))
        );
    }
}
