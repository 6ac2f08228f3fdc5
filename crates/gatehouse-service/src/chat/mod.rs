//! The chat runtime: the approval manager's events become chat cards, and chat button presses
//! and `/approve` messages become decisions through the same manager; `/elevated` typed in a
//! chat sets the level of the session bound to it.
//!
//! The binary connects the adapters and hands them over as [`ConnectedChannel`]s, so this crate
//! never depends on an adapter crate.
//!
//! **Invariants.** Every decision goes through [`ApprovalManager::resolve`] as the presser, after
//! the chat core's approver and token checks. Every chat message about an approval is recorded
//! in the store's outbox before it is sent, with each attempt and its outcome, so resolve,
//! expiry, cancellation and a restart edit every copy, including one whose send was under way
//! when the process died (see `journal`). Button tokens live in memory on purpose: the manager
//! cancels every pending approval when the service starts (`gateway-restart`), so no token from
//! an earlier process could decide anything; a press on such a card is answered "not valid
//! here" and the card itself is edited into its cancellation notice at start-up.
//!
//! [`ApprovalManager::resolve`]: gatehouse_approvals::ApprovalManager::resolve

mod cards;
mod directive;
mod inbound;
mod journal;
mod outbound;
mod sessions;
mod settings;
mod status;
mod view;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use gatehouse_approvals::{ApprovalRequest, ChatOutbox};
use gatehouse_chat::config::ChatApprovals;
use gatehouse_chat::delivery::{Deliverer, RetryPolicy};
use gatehouse_chat::dispatch::{Channels, Dispatcher, QueueStatus};
use gatehouse_chat::plan::plan_delivery;
use gatehouse_chat::strangers::StrangerReplies;
use gatehouse_chat::token::{MemoryTokenStore, TokenRegistry};
use gatehouse_chat::{Channel, Inbound, Platforms};
use tokio::sync::mpsc;

use crate::core::Core;
use crate::error::ServiceError;

use cards::CardIndex;
pub(crate) use directive::{bind_session, directive};
/// The chat core's record of a failed reply or answer, which [`ChatStatus`] lists.
pub use gatehouse_chat::delivery::{Operation, TargetFailure};
/// A conversation with messages waiting, which [`ChatStatus`] lists.
pub use gatehouse_chat::dispatch::QueueStatus as ChatQueue;
use journal::OutboxJournal;
pub use sessions::check_sessions_file;
pub(crate) use sessions::{BoundRoute, Sessions};
pub(crate) use settings::chat_approvals;
pub use settings::chat_setting_problems;

/// One connected chat adapter, as the binary hands it to the service.
pub struct ConnectedChannel {
    /// The adapter.
    pub channel: Arc<dyn Channel>,
    /// The bot's own handle, so `/approve@thisbot` is accepted and another bot's is refused.
    pub bot_username: Option<String>,
}

/// Everything the chat runtime starts from.
pub struct ChatSetup {
    /// The connected adapters; an empty list still validates the chat config.
    pub channels: Vec<ConnectedChannel>,
    /// Every platform this build knows (not only the connected ones): their id rules check
    /// approvers and read conversations.
    pub platforms: Platforms,
    /// Where every chat message is recorded before it is sent (the approvals store's outbox).
    pub outbox: Arc<dyn ChatOutbox>,
    /// This gateway's name in the outbox's claims: stable across its restarts, unique among
    /// gateways sharing the store.
    pub instance: String,
    /// The JSON file holding session bindings and `/elevated` levels (created 0600 on first use).
    pub sessions_file: PathBuf,
}

/// A channel whose connection ended with an error, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoppedChannel {
    /// The channel name.
    pub channel: String,
    /// Its last error.
    pub error: String,
}

/// What is wrong with one chat message about an approval, as the outbox knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProblemKind {
    /// Not delivered yet: tried and refused, retried while its approval lives.
    Undelivered,
    /// Delivered, its approval settled, but its final edit was refused: it may still show
    /// live buttons; retried.
    Unedited,
    /// Given up: an attempt was under way at a crash on a platform that cannot say where it
    /// landed, or its edit was refused for a day. The chat may show a stale card.
    Lost,
}

/// One chat message an operator must hear of: each is listed until it is fixed, apart from
/// every other message to the same chat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageProblem {
    /// The channel.
    pub channel: String,
    /// Where it goes (`telegram:user:4242`).
    pub target: String,
    /// The approval it shows; `None` for a digest.
    pub approval_id: Option<String>,
    /// `card`, `prompt`, `notice`, `fallback` or `digest`.
    pub kind: String,
    /// What is wrong.
    pub problem: ProblemKind,
    /// The platform's last answer (or why it is lost).
    pub error: String,
    /// Attempts to send it so far.
    pub attempts: u32,
    /// When the last failure happened (Unix ms).
    pub failed_at_ms: Option<u64>,
    /// When it is tried next (Unix ms).
    pub retry_at_ms: Option<u64>,
}

/// Chat approvals as an operator checks on them: connected channels, messages not delivered or
/// not edited, queues and digests, and replies that failed.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatStatus {
    /// Connected channel names, sorted.
    pub channels: Vec<String>,
    /// Approval messages not delivered or not edited yet, or lost, newest first.
    pub problems: Vec<MessageProblem>,
    /// Conversations with messages waiting or copies to edit.
    pub queues: Vec<QueueStatus>,
    /// The last unrecovered failure of each reply and answer target.
    pub failures: Vec<TargetFailure>,
    /// Channels whose connection ended with an error: no longer an approval route.
    pub stopped: Vec<StoppedChannel>,
}

/// The running chat side: dispatcher, validated settings, session bindings, and what it shares
/// with the rest of the service (manager, config, audit) — never the service itself.
pub(crate) struct ChatRuntime {
    core: Arc<Core>,
    dispatcher: Arc<Dispatcher<MemoryTokenStore>>,
    outbox: Arc<dyn ChatOutbox>,
    approvals: ChatApprovals,
    platforms: Platforms,
    bot_usernames: HashMap<String, String>,
    /// Which approval each delivered message shows, so a reply to a card names its approval.
    cards: CardIndex,
    /// How often people who may decide nothing are answered, so a flood of their commands
    /// never reaches the platform ahead of a card.
    strangers: StrangerReplies,
    pub(crate) sessions: Sessions,
    /// Channels whose `run` ended with an error. They are left out of routes and shown in the
    /// status: a dead channel must not hold approvals until their timeout as if someone could
    /// answer there.
    stopped: Mutex<Vec<StoppedChannel>>,
}

impl std::fmt::Debug for ChatRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.dispatcher.channels.keys().collect();
        names.sort_unstable();
        f.debug_struct("ChatRuntime")
            .field("channels", &names)
            .finish_non_exhaustive()
    }
}

impl ChatRuntime {
    /// Whether a chat surface would receive a prompt for `request`: counted as an approval route,
    /// so such a request is not expired at once with `no-approval-route`.
    pub(crate) fn has_route(&self, request: &ApprovalRequest) -> bool {
        let origin = view::turn_source(request, &self.platforms);
        let plan = plan_delivery(
            view::request_meta(request, origin.as_ref()),
            &self.approvals,
        );
        plan.messages.iter().any(|message| {
            self.dispatcher
                .channels
                .contains_key(&message.route.channel)
                && !self.is_stopped(&message.route.channel)
        })
    }

    /// Whether any chat channel runs (not stopped): what this gateway tells the others sharing
    /// its store about its chat routes.
    pub(crate) fn reaches_anyone(&self) -> bool {
        self.dispatcher
            .channels
            .keys()
            .any(|channel| !self.is_stopped(channel))
    }

    fn stopped(&self) -> std::sync::MutexGuard<'_, Vec<StoppedChannel>> {
        self.stopped.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn is_stopped(&self, channel: &str) -> bool {
        self.stopped()
            .iter()
            .any(|stopped| stopped.channel == channel)
    }

    /// Records that `channel` stopped with `error`.
    fn mark_stopped(&self, channel: &str, error: String) {
        self.stopped().push(StoppedChannel {
            channel: channel.to_owned(),
            error,
        });
    }

    /// Connected channels, every approval message with a problem (from the outbox, so a
    /// message refused before a restart is still shown), the queues and reply failures.
    pub(crate) async fn status(&self) -> ChatStatus {
        let stopped = self.stopped().clone();
        let mut channels: Vec<String> = self
            .dispatcher
            .channels
            .keys()
            .filter(|name| !stopped.iter().any(|s| &s.channel == *name))
            .cloned()
            .collect();
        channels.sort_unstable();
        let lost_since = self.now_ms().saturating_sub(LOST_SHOWN_MS);
        let problems = match self
            .outbox
            .troubled_messages(lost_since, PROBLEMS_SHOWN)
            .await
        {
            Ok(entries) => entries.iter().map(status::problem).collect(),
            Err(error) => {
                tracing::error!(error = %error, "Cannot read the chat outbox for the status.");
                Vec::new()
            }
        };
        ChatStatus {
            channels,
            problems,
            queues: self.dispatcher.queues(),
            failures: self.dispatcher.deliverer.failures(),
            stopped,
        }
    }

    /// Milliseconds since the Unix epoch, for card expiry text and token checks.
    fn now_ms(&self) -> u64 {
        self.core.clock.now_ms()
    }
}

/// How long a lost message stays in the status: a day, for the operator to look at the chat.
const LOST_SHOWN_MS: u64 = 24 * 60 * 60 * 1000;

/// The most problem messages the status lists (newest first).
const PROBLEMS_SHOWN: usize = 200;

impl ChatRuntime {
    /// The runtime for `setup`: the chat config validated, the connected channels and the
    /// session bindings loaded. Nothing runs yet.
    pub(crate) fn new(core: Arc<Core>, setup: &ChatSetup) -> Result<Arc<Self>, ServiceError> {
        let approvals = chat_approvals(&core.config, &setup.platforms)?;
        let mut channels = Channels::new();
        let mut bot_usernames = HashMap::new();
        let mut deliverer = Deliverer::new(RetryPolicy::default());
        for connected in &setup.channels {
            let name = connected.channel.name().to_owned();
            if let Some(username) = &connected.bot_username {
                bot_usernames.insert(name.clone(), username.clone());
            }
            let settings =
                settings::delivery_settings(&core.config, &name, connected.channel.pacing());
            deliverer = deliverer.with_settings(&name, settings);
            channels.insert(name, Arc::clone(&connected.channel));
        }
        let strangers = approvals.stranger_replies();
        let journal = OutboxJournal {
            outbox: Arc::clone(&setup.outbox),
            clock: Arc::clone(&core.clock),
            claimant: setup.instance.clone(),
        };
        let clock = Arc::clone(&core.clock);
        let dispatcher = Arc::new(Dispatcher::new(
            channels,
            deliverer,
            TokenRegistry::in_memory(),
            Arc::new(journal),
            Arc::new(move || clock.now_ms()),
        ));
        Ok(Arc::new(ChatRuntime {
            core,
            cards: CardIndex::new(Arc::clone(&dispatcher)),
            dispatcher,
            outbox: Arc::clone(&setup.outbox),
            approvals,
            platforms: setup.platforms.clone(),
            bot_usernames,
            strangers,
            sessions: Sessions::open(&setup.sessions_file, setup.platforms.clone())?,
            stopped: Mutex::new(Vec::new()),
        }))
    }

    /// Subscribes to approval events, picks the outbox up where the last run left it (the
    /// cards of approvals the restart cancelled are edited), and runs every adapter until
    /// shutdown. Must run inside a tokio runtime.
    pub(crate) fn run(self: &Arc<Self>, setup: ChatSetup) {
        let events = self.core.manager.subscribe();
        let shutdown = self.core.shutdown_signal();
        self.dispatcher.start();
        tokio::spawn(outbound::run(Arc::clone(self), events));
        let (sender, receiver) = mpsc::channel::<Inbound>(256);
        for connected in setup.channels {
            let sender = sender.clone();
            let channel = connected.channel;
            let runtime = Arc::clone(self);
            tokio::spawn(async move {
                if let Err(error) = channel.run(sender).await {
                    tracing::error!(
                        channel = %channel.name(),
                        error = %error,
                        "Chat channel stopped; it is no longer an approval route."
                    );
                    runtime.mark_stopped(channel.name(), error.to_string());
                }
            });
        }
        drop(sender);
        let runtime = Arc::clone(self);
        tokio::spawn(async move {
            tokio::select! {
                () = inbound::run(runtime, receiver) => {}
                () = shutdown => {}
            }
        });
    }
}
