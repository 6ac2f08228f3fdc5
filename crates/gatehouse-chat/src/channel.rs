//! The narrow trait every chat adapter implements, and the inbound events it reports.
//!
//! An adapter only translates: a [`Card`] into its platform's message, a platform update into an
//! [`Inbound`]. Parsing, approver checks, token checks, retries and rate limits happen in this
//! crate, once, for every channel; an adapter only states its platform's limits
//! ([`Channel::pacing`]) and whether a send can be repeated safely
//! ([`Channel::idempotent_sends`]).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use gatehouse_policy::elevated::SenderIdentity;
use tokio::sync::mpsc;

use crate::conversation::Place;
use crate::error::ChatError;
use crate::render::Card;
use crate::route::{Destination, MessageLocator, Route, SendKey};
use crate::throttle::Pacing;

/// A chat platform connection.
///
/// Errors are classified by the adapter into [`ChatError::RateLimited`] (with the platform's
/// `retry_after` and what the limit covers), [`ChatError::Transient`] or
/// [`ChatError::Permanent`]; the delivery layer retries on that classification alone. An
/// adapter never retries or waits on its own.
#[async_trait]
pub trait Channel: Send + Sync {
    /// The channel name used in config and routes (`telegram`, `discord`, `slack`).
    fn name(&self) -> &str;

    /// The platform's documented limits, which the delivery layer keeps for every call of
    /// this channel (the operator's `channels.<name>.delivery` overrides them).
    fn pacing(&self) -> Pacing {
        Pacing::default()
    }

    /// Whether the platform counts `destination` as a group, whose own limit
    /// ([`Pacing::group`]) applies on top of the chat's.
    fn is_group(&self, destination: &Destination) -> bool {
        let _ = destination;
        false
    }

    /// Whether sending the same [`SendKey`] twice yields one message (Discord's nonce): then a
    /// send whose answer was lost is repeated safely, and one in flight at a crash is found
    /// again after the restart.
    fn idempotent_sends(&self) -> bool {
        false
    }

    /// Whether [`Channel::find_sent`] can find a message an earlier attempt left (Slack, by
    /// the key kept in each message's metadata): then a send whose answer was lost, or one in
    /// flight at a crash, is looked up before it is sent again.
    fn finds_sent(&self) -> bool {
        false
    }

    /// The message an earlier attempt under `key` left in `route`'s conversation, if any. Only
    /// called when [`Channel::finds_sent`] says it can look.
    async fn find_sent(
        &self,
        route: &Route,
        key: &SendKey,
    ) -> Result<Option<MessageLocator>, ChatError> {
        let _ = (route, key);
        Ok(None)
    }

    /// Delivers `card` to `route` (opening a DM first when the route names a user) and returns
    /// where it landed. Every attempt to send one message carries the same `key`.
    async fn send(
        &self,
        route: &Route,
        card: &Card,
        key: &SendKey,
    ) -> Result<MessageLocator, ChatError>;

    /// Replaces a delivered message with `card` (a receipt, an expiry notice), buttons included
    /// or removed as the card says.
    async fn update(&self, message: &MessageLocator, card: &Card) -> Result<(), ChatError>;

    /// Deletes a delivered message (`cleanupAfterResolve`).
    async fn delete(&self, message: &MessageLocator) -> Result<(), ChatError>;

    /// Answers an interaction so only its author sees `text` (a callback answer, an ephemeral
    /// reply).
    async fn answer(&self, interaction: &InteractionRef, text: &str) -> Result<(), ChatError>;

    /// Receives commands and button presses until the connection ends, pushing each into
    /// `inbound`. Returns when `inbound` is closed or the connection fails for good.
    async fn run(&self, inbound: mpsc::Sender<Inbound>) -> Result<(), ChatError>;

    /// On a gateway that shares its store with others but does not hold the chat connections
    /// (docs/high-availability.md, "Chat on replicas"): takes what the platform may deliver
    /// to any gateway (a webhook route the host serves), pushing each into `inbound`, until
    /// `inbound` is closed. It opens no connection and registers nothing with the platform:
    /// that is the holder's [`Channel::run`]. The default takes nothing, and a kind of event
    /// an adapter cannot take safely here stays refused (its route answers 503).
    async fn listen(&self, inbound: mpsc::Sender<Inbound>) -> Result<(), ChatError> {
        inbound.closed().await;
        Ok(())
    }

    /// On a gateway that shares its store with others, before [`Channel::run`] or
    /// [`Channel::listen`] is first called: the memory of signed requests every gateway
    /// shares, for an adapter whose platform signs requests against replay within a window
    /// (Slack's HTTP mode). With it, such a request taken by one gateway is refused at every
    /// other, so [`Channel::listen`] can take it too. The default keeps nothing.
    fn share_replay_memory(&self, memory: Arc<dyn ReplayMemory>) {
        let _ = memory;
    }
}

/// Signed requests already taken by any gateway sharing the store; see
/// [`Channel::share_replay_memory`].
#[async_trait]
pub trait ReplayMemory: Send + Sync {
    /// Records `key` (the platform's name for one signed request, such as its signature)
    /// until `expires_at_ms`, when the platform's own window refuses the request anyway: true
    /// only for the first gateway to record it. An error means nobody can tell; the request
    /// must then be refused.
    async fn first_delivery(
        &self,
        key: String,
        expires_at_ms: u64,
    ) -> Result<bool, ReplayMemoryError>;
}

/// The shared replay memory could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the replay memory shared by the gateways cannot be reached: {reason}")]
pub struct ReplayMemoryError {
    /// What the store said.
    pub reason: String,
}

/// What the platform needs to answer one interaction privately.
#[derive(Clone, PartialEq, Eq)]
pub struct InteractionRef {
    /// The channel it arrived on.
    pub channel: String,
    /// The adapter's own handle (a callback query id, an interaction id and token, a response
    /// URL). It can authorize replies, so `Debug` does not print it.
    pub handle: String,
}

impl fmt::Debug for InteractionRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InteractionRef")
            .field("channel", &self.channel)
            .field("handle", &"**REDACTED**")
            .finish()
    }
}

/// A text message or slash command addressed to the bot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundText {
    /// Who sent it, with every identity field the platform supplies.
    pub sender: SenderIdentity,
    /// Where it was typed (its own locator; the route for a public reply). Slash commands that
    /// have no message carry the interaction's id as `message_id`.
    pub message: MessageLocator,
    /// The text, with a slash command's name and arguments joined back into one line.
    pub text: String,
    /// The conversation it was typed in, as session bindings name it (normalized by the
    /// adapter's platform), so `/elevated` finds the session bound there.
    pub place: Place,
    /// The message it replies to, so a reply to a card can name the approval.
    pub reply_to: Option<MessageLocator>,
    /// Whether it was typed in a direct conversation with the bot.
    pub is_direct: bool,
    /// Present for slash commands and other interactions that want a private answer.
    pub interaction: Option<InteractionRef>,
    /// How to answer only the sender of a message typed in a shared chat, where the platform
    /// offers that without an interaction (Slack's ephemeral messages); `None` elsewhere. The
    /// core answers privately this way whenever a reply must not reach the whole chat.
    pub private_reply: Option<InteractionRef>,
}

/// A press of a decision button.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ButtonPress {
    /// Who pressed it.
    pub sender: SenderIdentity,
    /// The opaque token from the button's payload, unverified.
    pub token: String,
    /// The message the button was on, as the platform reported it.
    pub message: MessageLocator,
    /// How to answer the presser privately.
    pub interaction: InteractionRef,
}

/// Everything an adapter reports. A text carries more than a press (its place and reply
/// handles), but events are few and moved once through a queue, so neither is boxed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)]
pub enum Inbound {
    /// A text message or slash command.
    Text(InboundText),
    /// A button press.
    Press(ButtonPress),
}
