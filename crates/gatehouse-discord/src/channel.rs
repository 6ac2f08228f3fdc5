//! [`DiscordChannel`]: the chat core's [`Channel`] over Discord's REST API and gateway.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use gatehouse_chat::render::Card;
use gatehouse_chat::throttle::{Pacing, Window};
use gatehouse_chat::{
    Channel, ChatError, Destination, Inbound, InteractionRef, MessageLocator, Route, SendKey,
};
use serde::Deserialize;
use serde_json::json;
use serenity::all::{
    ApplicationId, ChannelId, CurrentUser, GuildId, Message, MessageId, Nonce, UserId,
};
use serenity::http::{LightMethod, Route as ApiRoute};
use tokio::sync::mpsc;

use crate::classify::{self, CHANNEL};
use crate::commands::definitions;
use crate::config::DiscordConfig;
use crate::error::DiscordError;
use crate::gateway;
use crate::inbound::Context;
use crate::interaction::{self, Handle};
use crate::markup::{create_message, edit_message};
use crate::rest::Rest;

/// A connected Discord bot.
pub struct DiscordChannel {
    config: DiscordConfig,
    rest: Arc<Rest>,
    ctx: Context,
    /// DM channel per user, opened on first use: Discord returns the same channel every time,
    /// so one call per approver per process is enough.
    dms: Mutex<HashMap<UserId, ChannelId>>,
}

/// The part of a channel object a DM open returns that we need.
#[derive(Deserialize)]
struct OpenedDm {
    id: ChannelId,
}

impl DiscordChannel {
    /// Checks the config and the token (`GET /users/@me`), learning the bot's user id.
    pub async fn connect(config: DiscordConfig) -> Result<Self, DiscordError> {
        config.validate()?;
        let rest = Rest::new(&config)?;
        let me: CurrentUser = rest
            .json(ApiRoute::UserMe, LightMethod::Get, None::<&()>)
            .await
            .map_err(|source| DiscordError::Connect { source })?;
        let ctx = Context {
            account_id: config.account_id.clone(),
            bot_user_id: me.id,
            guilds: config.guild_ids.clone(),
        };
        Ok(Self {
            config,
            rest: Arc::new(rest),
            ctx,
            dms: Mutex::new(HashMap::new()),
        })
    }

    /// Registers `/approve`, `/elevated`, `/start` and `/help` in every configured guild (a bulk overwrite, so
    /// running it again changes nothing). Guild commands appear at once; global ones would
    /// take up to an hour.
    pub async fn register_commands(&self) -> Result<(), ChatError> {
        let application_id = ApplicationId::new(self.config.application_id);
        for &guild in &self.config.guild_ids {
            let route = ApiRoute::GuildCommands {
                application_id,
                guild_id: GuildId::new(guild),
            };
            self.rest
                .send(route, LightMethod::Put, Some(&definitions()))
                .await?;
            tracing::info!(
                channel = CHANNEL,
                guild_id = guild,
                "Registered /approve, /elevated, /start and /help."
            );
        }
        Ok(())
    }

    async fn dm_channel(&self, user: UserId) -> Result<ChannelId, ChatError> {
        if let Some(&channel) = self.lock_dms().get(&user) {
            return Ok(channel);
        }
        let opened: OpenedDm = self
            .rest
            .json(
                ApiRoute::UserMeDmChannels,
                LightMethod::Post,
                Some(&json!({"recipient_id": user})),
            )
            .await?;
        self.lock_dms().insert(user, opened.id);
        Ok(opened.id)
    }

    fn lock_dms(&self) -> std::sync::MutexGuard<'_, HashMap<UserId, ChannelId>> {
        self.dms.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The channel a route's message goes to: a DM (opened on demand), or the thread when the
    /// route names one (threads are channels on Discord), else the chat.
    async fn target(&self, route: &Route) -> Result<ChannelId, ChatError> {
        match &route.destination {
            Destination::Dm(user) => self.dm_channel(UserId::new(snowflake(user)?)).await,
            Destination::Chat(chat) => {
                let id = route.thread_id.as_deref().unwrap_or(chat);
                Ok(ChannelId::new(snowflake(id)?))
            }
        }
    }

    fn message_route(message: &MessageLocator) -> Result<ApiRoute<'static>, ChatError> {
        if message.channel != CHANNEL {
            return Err(classify::permanent(format!(
                "message belongs to channel {}",
                message.channel
            )));
        }
        Ok(ApiRoute::ChannelMessage {
            channel_id: ChannelId::new(snowflake(&message.chat_id)?),
            message_id: MessageId::new(snowflake(&message.message_id)?),
        })
    }
}

#[async_trait]
impl Channel for DiscordChannel {
    fn name(&self) -> &str {
        CHANNEL
    }

    /// Discord's documented global limit of 50 requests a second per bot, and its usual bucket
    /// for messages in one channel (5 per 5 s); the buckets it names in 429s are paused as
    /// named.
    fn pacing(&self) -> Pacing {
        Pacing {
            chat: Some(Window {
                calls: 5,
                per: std::time::Duration::from_secs(5),
            }),
            group: None,
            bot: Some(Window::per_second(50)),
            edits: None,
            max_in_flight: self.config.max_connections,
        }
    }

    /// A create carries the key as its `nonce` with `enforce_nonce`: within Discord's window
    /// (a few minutes) a repeat returns the message the first one created.
    fn idempotent_sends(&self) -> bool {
        true
    }

    async fn send(
        &self,
        route: &Route,
        card: &Card,
        key: &SendKey,
    ) -> Result<MessageLocator, ChatError> {
        let channel_id = self.target(route).await?;
        let body = create_message(card)
            .nonce(Nonce::String(key.as_str().to_owned()))
            .enforce_nonce(true);
        let sent: Message = self
            .rest
            .json(
                ApiRoute::ChannelMessages { channel_id },
                LightMethod::Post,
                Some(&body),
            )
            .await?;
        Ok(MessageLocator {
            channel: CHANNEL.to_owned(),
            account_id: self.ctx.account_id.clone(),
            chat_id: sent.channel_id.to_string(),
            message_id: sent.id.to_string(),
            thread_id: route.thread_id.clone(),
        })
    }

    async fn update(&self, message: &MessageLocator, card: &Card) -> Result<(), ChatError> {
        let route = Self::message_route(message)?;
        self.rest
            .unless_gone(route, LightMethod::Patch, Some(&edit_message(card)))
            .await
    }

    async fn delete(&self, message: &MessageLocator) -> Result<(), ChatError> {
        let route = Self::message_route(message)?;
        self.rest
            .unless_gone(route, LightMethod::Delete, None::<&()>)
            .await
    }

    async fn answer(&self, interaction: &InteractionRef, text: &str) -> Result<(), ChatError> {
        let handle = Handle::parse(interaction)?;
        interaction::answer(&self.rest, &handle, text).await
    }

    async fn run(&self, inbound: mpsc::Sender<Inbound>) -> Result<(), ChatError> {
        if let Err(error) = self.register_commands().await {
            // Buttons and text commands still work; the operator sees why slash commands do not.
            tracing::warn!(channel = CHANNEL, error = %error, "Registering application commands failed.");
        }
        gateway::run(
            &self.config,
            Arc::clone(&self.rest),
            self.ctx.clone(),
            inbound,
        )
        .await
    }
}

/// A Discord id from a route or locator; anything else is refused, never sent.
fn snowflake(id: &str) -> Result<u64, ChatError> {
    id.trim()
        .parse::<u64>()
        .ok()
        .filter(|&id| id != 0)
        .ok_or_else(|| classify::permanent(format!("{id:?} is not a discord id")))
}
