//! The one place both connection modes hand their events to: it translates them and pushes them
//! into the chat core's queue without waiting, because Slack wants every envelope and request
//! answered within 3 seconds.

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use gatehouse_chat::Inbound;
use slack_morphism::prelude::*;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

use crate::inbound;
use crate::replies::PendingReplies;

/// Shared by the Socket Mode callbacks, the HTTP router and the channel.
#[derive(Debug)]
pub(crate) struct Intake {
    account_id: Option<String>,
    bot_user_id: RwLock<Option<String>>,
    queue: RwLock<Option<mpsc::Sender<Inbound>>>,
    pub(crate) replies: PendingReplies,
    reply_wait: Duration,
}

impl Intake {
    pub(crate) fn new(account_id: Option<String>, reply_wait: Duration) -> Self {
        Self {
            account_id,
            bot_user_id: RwLock::new(None),
            queue: RwLock::new(None),
            replies: PendingReplies::default(),
            reply_wait,
        }
    }

    /// Starts (`Some`) or stops (`None`) taking events for the core.
    pub(crate) fn attach(&self, queue: Option<mpsc::Sender<Inbound>>) {
        *self.queue.write().unwrap_or_else(PoisonError::into_inner) = queue;
    }

    /// Remembers the bot's own user id (from `auth.test`), to ignore its messages and mentions.
    pub(crate) fn set_bot_user_id(&self, id: String) {
        *self
            .bot_user_id
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(id);
    }

    /// Whether events are being taken; HTTP mode answers 503 otherwise so Slack retries.
    pub(crate) fn is_attached(&self) -> bool {
        self.queue
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// A block action. Other interaction kinds (modals, shortcuts) are not used by this app.
    pub(crate) fn interaction(&self, event: &SlackInteractionEvent) {
        if let SlackInteractionEvent::BlockActions(actions) = event
            && let Some(press) = inbound::press(actions, self.account_id.as_deref())
        {
            self.push(press);
        }
    }

    /// An Events API callback; only messages matter.
    pub(crate) fn event(&self, event: &SlackPushEventCallback) {
        if let SlackEventCallbackBody::Message(message) = &event.event {
            let bot = self
                .bot_user_id
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            if let Some(text) =
                inbound::message(message, bot.as_deref(), self.account_id.as_deref())
            {
                self.push(text);
            }
        }
    }

    /// A slash command: pushed like text, then waits briefly for the core's answer so the
    /// answer can go into the command's own response.
    pub(crate) async fn command(self: Arc<Self>, event: &SlackCommandEvent) -> Option<String> {
        let key = event.trigger_id.0.clone();
        let rx = self.replies.expect(&key);
        self.push(inbound::command(event, self.account_id.as_deref()));
        self.replies.wait(&key, rx, self.reply_wait).await
    }

    /// Queues without blocking the caller: if the queue is full the send waits in its own task,
    /// so an interaction is never dropped and the ack is never late.
    fn push(&self, event: Inbound) {
        let queue = self
            .queue
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let Some(queue) = queue else {
            tracing::warn!(
                channel = "slack",
                "Slack event arrived before the channel ran; dropped."
            );
            return;
        };
        match queue.try_send(event) {
            Ok(()) => {}
            Err(TrySendError::Full(event)) => {
                tokio::spawn(async move {
                    if queue.send(event).await.is_err() {
                        tracing::warn!(
                            channel = "slack",
                            "Chat core stopped; Slack event dropped."
                        );
                    }
                });
            }
            Err(TrySendError::Closed(_)) => {
                tracing::warn!(channel = "slack", "Chat core stopped; Slack event dropped.");
            }
        }
    }
}
