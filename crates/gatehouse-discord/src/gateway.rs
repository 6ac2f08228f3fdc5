//! The gateway connection: serenity's shard (which heartbeats, reconnects and RESUMEs, so
//! events missed during a drop are replayed) and the event handler that acknowledges
//! interactions and forwards everything to the core.

use std::sync::Arc;

use gatehouse_chat::{ChatError, Inbound};
use serenity::all::{
    ClientBuilder, CommandInteraction, ComponentInteraction, Context as SerenityContext,
    EventHandler, Interaction, Message, Ready,
};
use serenity::gateway::ShardStageUpdateEvent;
use tokio::sync::mpsc;

use crate::classify;
use crate::config::DiscordConfig;
use crate::inbound::{self, Context};
use crate::interaction::{self, Handle, Kind};
use crate::rest::{Rest, http_builder};
use crate::threads::Threads;

/// Connects and dispatches until `inbound` closes (then the shards shut down) or serenity
/// gives up on the connection.
pub(crate) async fn run(
    config: &DiscordConfig,
    rest: Arc<Rest>,
    ctx: Context,
    inbound: mpsc::Sender<Inbound>,
) -> Result<(), ChatError> {
    let closed = inbound.clone();
    let handler = Handler {
        rest,
        ctx,
        inbound,
        threads: Threads::default(),
    };
    // serenity's client owns its own `Http` (it only asks it for the gateway URL); every call
    // the adapter makes goes through `Rest`.
    let mut client = ClientBuilder::new_with_http(http_builder(config).build(), config.intents())
        .event_handler(handler)
        .await
        .map_err(classify::serenity)?;
    let shards = Arc::clone(&client.shard_manager);
    tokio::select! {
        result = client.start() => result.map_err(|error| {
            classify::permanent(format!("the gateway connection ended: {error}"))
        }),
        () = closed.closed() => {
            shards.shutdown_all().await;
            Ok(())
        }
    }
}

struct Handler {
    rest: Arc<Rest>,
    ctx: Context,
    inbound: mpsc::Sender<Inbound>,
    /// Which channels are threads, so a message typed in one also finds its parent's session.
    threads: Threads,
}

impl Handler {
    async fn push(&self, event: Inbound) {
        if self.inbound.send(event).await.is_err() {
            tracing::debug!(
                channel = classify::CHANNEL,
                "Inbound queue closed; event dropped."
            );
        }
    }

    /// Defers first (the 3-second deadline), then reports. An interaction that could not be
    /// acknowledged is dropped: its presser was told it failed, so deciding on it anyway would
    /// surprise them.
    async fn component(&self, press: ComponentInteraction) {
        let handle = Handle {
            kind: Kind::Component,
            application_id: press.application_id.get(),
            token: press.token.clone(),
        };
        let Some(event) = inbound::from_component(&press, handle.to_ref(), &self.ctx) else {
            return;
        };
        if let Err(error) =
            interaction::defer(&self.rest, Kind::Component, press.id, &press.token).await
        {
            tracing::warn!(channel = classify::CHANNEL, error = %error, "Button press could not be acknowledged; ignored.");
            return;
        }
        self.push(event).await;
    }

    async fn command(&self, command: CommandInteraction) {
        let handle = Handle {
            kind: Kind::Command,
            application_id: command.application_id.get(),
            token: command.token.clone(),
        };
        let Some(event) = inbound::from_command(&command, handle.to_ref(), &self.ctx) else {
            let reply = "Gatehouse does not handle this command.";
            if let Err(error) =
                interaction::reply_now(&self.rest, command.id, &command.token, reply).await
            {
                tracing::warn!(channel = classify::CHANNEL, error = %error, "Unknown command could not be answered.");
            }
            return;
        };
        if let Err(error) =
            interaction::defer(&self.rest, Kind::Command, command.id, &command.token).await
        {
            tracing::warn!(channel = classify::CHANNEL, error = %error, "Command could not be acknowledged; ignored.");
            return;
        }
        self.push(event).await;
    }
}

#[serenity::async_trait]
impl EventHandler for Handler {
    async fn ready(&self, _ctx: SerenityContext, ready: Ready) {
        tracing::info!(
            channel = classify::CHANNEL,
            bot_user_id = %ready.user.id,
            guilds = ready.guilds.len(),
            "Discord gateway ready."
        );
    }

    async fn shard_stage_update(&self, _ctx: SerenityContext, event: ShardStageUpdateEvent) {
        tracing::info!(
            channel = classify::CHANNEL,
            from = %event.old,
            to = %event.new,
            "Discord gateway connection stage changed."
        );
    }

    async fn message(&self, _ctx: SerenityContext, message: Message) {
        let parent = match message.guild_id {
            Some(_) => self.threads.parent_of(&self.rest, message.channel_id).await,
            None => None,
        };
        if let Some(event) = inbound::from_message(&message, parent, &self.ctx) {
            self.push(event).await;
        }
    }

    async fn interaction_create(&self, _ctx: SerenityContext, interaction: Interaction) {
        match interaction {
            Interaction::Component(press) => self.component(press).await,
            Interaction::Command(command) => self.command(command).await,
            _ => {}
        }
    }
}
