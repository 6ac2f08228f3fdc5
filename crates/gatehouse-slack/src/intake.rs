//! The one place both connection modes hand their events to: it translates them and pushes them
//! into the chat core's queue without waiting, because Slack wants every envelope and request
//! answered within 3 seconds.

use std::sync::{Arc, OnceLock, PoisonError, RwLock};
use std::time::Duration;

use gatehouse_chat::{Inbound, ReplayMemory};
use slack_morphism::prelude::*;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

use crate::inbound;
use crate::replies::PendingReplies;

/// The bot as `auth.test` reports it.
#[derive(Debug, Clone)]
pub(crate) struct Me {
    pub(crate) bot_user_id: String,
    /// The workspace (team) id the bot token belongs to.
    pub(crate) workspace: String,
}

/// What a gateway takes from Slack while its intake is attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Everything: the gateway holding the chat connections (or alone on its store), or one
    /// sharing the holder's replay memory of events and commands.
    Everything,
    /// Button presses only: a gateway sharing its store with the holder
    /// ([`Channel::listen`](gatehouse_chat::Channel::listen)) but not its replay memory. A
    /// press is safe anywhere: its token names one approval and one decision, and the store
    /// lets the first answer win, so a captured press replayed to another gateway (whose
    /// replay memory is its own) repeats a decision and changes nothing. An event or a slash
    /// command is not: a replayed `/elevated on` would set the level again after the owner
    /// turned it off. Those stay refused (503) here unless the gateways share the memory of
    /// them ([`Intake::shared_replays`]); Slack retries an event, and a slash command shows
    /// its error.
    Presses,
}

/// What an HTTP-mode request carries, told apart before it is acted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An interaction (a button press).
    Interaction,
    /// An Events API callback, a URL check or a slash command.
    Other,
}

/// Shared by the Socket Mode callbacks, the HTTP router and the channel.
pub(crate) struct Intake {
    account_id: Option<String>,
    /// Who this bot is, from `auth.test`; `None` until then, and nothing is taken before.
    me: RwLock<Option<Me>>,
    queue: RwLock<Option<(mpsc::Sender<Inbound>, Scope)>>,
    pub(crate) replies: PendingReplies,
    reply_wait: Duration,
    /// The memory of events and commands every gateway sharing the store keeps
    /// ([`Channel::share_replay_memory`](gatehouse_chat::Channel::share_replay_memory)).
    replays: OnceLock<Arc<dyn ReplayMemory>>,
}

impl std::fmt::Debug for Intake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Intake")
            .field("account_id", &self.account_id)
            .field("shares_replays", &self.replays.get().is_some())
            .finish_non_exhaustive()
    }
}

impl Intake {
    pub(crate) fn new(account_id: Option<String>, reply_wait: Duration) -> Self {
        Self {
            account_id,
            me: RwLock::new(None),
            queue: RwLock::new(None),
            replies: PendingReplies::default(),
            reply_wait,
            replays: OnceLock::new(),
        }
    }

    /// Starts (`Some`) or stops (`None`) taking events for the core, all or presses only.
    pub(crate) fn attach(&self, queue: Option<(mpsc::Sender<Inbound>, Scope)>) {
        *self.queue.write().unwrap_or_else(PoisonError::into_inner) = queue;
    }

    /// Keeps the replay memory the gateways share; the first one given stays.
    pub(crate) fn share_replays(&self, memory: Arc<dyn ReplayMemory>) {
        let _ = self.replays.set(memory);
    }

    /// The replay memory a request of `kind` is checked against when the gateways share one:
    /// events and commands. Presses stay in this gateway's own memory (see
    /// [`Scope::Presses`]), which spares the store a write per press.
    pub(crate) fn shared_replays(&self, kind: Kind) -> Option<Arc<dyn ReplayMemory>> {
        (kind == Kind::Other)
            .then(|| self.replays.get().cloned())
            .flatten()
    }

    /// What a gateway not holding the chat connections takes: everything when the gateways
    /// share the memory of events and commands, presses alone otherwise.
    pub(crate) fn listener_scope(&self) -> Scope {
        match self.replays.get() {
            Some(_) => Scope::Everything,
            None => Scope::Presses,
        }
    }

    /// Remembers who the bot is (from `auth.test`): its user id, to ignore its messages and
    /// mentions, and its workspace, the only one whose people it hears.
    pub(crate) fn set_me(&self, me: Me) {
        *self.me.write().unwrap_or_else(PoisonError::into_inner) = Some(me);
    }

    fn me(&self) -> Option<Me> {
        self.me
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether an event Slack says comes from `team` may be read: only from the bot's own
    /// workspace, and nothing before the bot knows which that is.
    fn is_home(&self, team: &str, what: &'static str) -> bool {
        let home = self.me().is_some_and(|me| me.workspace == team);
        if !home {
            tracing::info!(
                target: "security",
                channel = "slack",
                team,
                what,
                "slack event from another workspace not read"
            );
        }
        home
    }

    /// Whether requests of `kind` are being taken; HTTP mode answers 503 otherwise so Slack
    /// retries.
    pub(crate) fn takes(&self, kind: Kind) -> bool {
        match *self.queue.read().unwrap_or_else(PoisonError::into_inner) {
            Some((_, Scope::Everything)) => true,
            Some((_, Scope::Presses)) => kind == Kind::Interaction,
            None => false,
        }
    }

    /// A block action. Other interaction kinds (modals, shortcuts) are not used by this app.
    pub(crate) fn interaction(&self, event: &SlackInteractionEvent) {
        if let SlackInteractionEvent::BlockActions(actions) = event
            && self.is_home(inbound::press_team(actions), "button press")
            && let Some(press) = inbound::press(actions, self.account_id.as_deref())
        {
            self.push(press);
        }
    }

    /// An Events API callback; only messages matter.
    pub(crate) fn event(&self, event: &SlackPushEventCallback) {
        if let SlackEventCallbackBody::Message(message) = &event.event
            && self.is_home(&event.team_id.0, "event")
            && self.is_home(inbound::message_team(message, &event.team_id.0), "message")
        {
            let bot = self.me().map(|me| me.bot_user_id);
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
        if !self.is_home(&event.team_id.0, "slash command") {
            return Some("Gatehouse answers only people of its own workspace.".to_owned());
        }
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
            .as_ref()
            .map(|(queue, _)| queue.clone());
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
