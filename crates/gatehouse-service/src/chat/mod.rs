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
//! when the process died (see `journal`). On a store of its own, button tokens live in memory on
//! purpose: the manager cancels every pending approval when the service starts
//! (`gateway-restart`), so no token from an earlier process could decide anything; a press on
//! such a card is answered "not valid here" and the card itself is edited into its cancellation
//! notice at start-up. On a store several gateways share, pending approvals outlive a gateway,
//! so tokens are kept in the store too and chat runs on the one gateway holding the chat lease
//! (see `shared`); the others take only webhook-style inbound that reaches them
//! ([`ChatRuntime::listen`]), decide presses through the shared store and leave every card to
//! the holder.
//!
//! [`ApprovalManager::resolve`]: gatehouse_approvals::ApprovalManager::resolve

mod cards;
mod directive;
mod inbound;
mod journal;
mod outbound;
mod sessions;
mod settings;
mod shared;
mod status;
mod view;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use gatehouse_approvals::{ApprovalRequest, ChatOutbox, SharedChat};
use gatehouse_chat::config::ChatApprovals;
use gatehouse_chat::delivery::{Deliverer, RetryPolicy};
use gatehouse_chat::dispatch::{Channels, Dispatcher, QueueStatus};
use gatehouse_chat::plan::plan_delivery;
use gatehouse_chat::strangers::StrangerReplies;
use gatehouse_chat::token::TokenRegistry;
use gatehouse_chat::{Channel, Inbound, Platforms};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::core::Core;
use crate::error::ServiceError;

use cards::CardIndex;
pub(crate) use directive::{bind_session, directive};
/// The chat core's record of a failed reply or answer, which [`ChatStatus`] lists.
pub use gatehouse_chat::delivery::{Operation, TargetFailure};
/// A conversation with messages waiting, which [`ChatStatus`] lists.
pub use gatehouse_chat::dispatch::QueueStatus as ChatQueue;
use inbound::Standing;
use journal::OutboxJournal;
pub use sessions::check_sessions_file;
pub(crate) use sessions::{BoundRoute, Sessions};
pub(crate) use settings::chat_approvals;
pub use settings::chat_setting_problems;
use shared::{CHAT_LEASE, SharedTokens};

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
    /// This gateway's name: stable across its restarts, unique among gateways sharing the
    /// store. It makes the outbox's claims on a store of its own, and names the holder of the
    /// chat lease on a shared one (where the lease makes the claims; see `shared`).
    pub instance: String,
    /// The JSON file holding session bindings and `/elevated` levels (created 0600 on first use).
    /// When the service shares state through a database
    /// ([`Prepared::share_state`](crate::Prepared::share_state)) the table is a document there
    /// instead, into which this file is imported once when the database has none.
    pub sessions_file: PathBuf,
    /// On a store several gateways share: what they share of chat. The chat connections then
    /// run only while this gateway holds the chat lease, and cards' buttons are kept in the
    /// store, so any gateway taking the lease over honours them.
    pub shared: Option<Arc<dyn SharedChat>>,
}

/// Who holds the chat connections, on a store several gateways share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatLease {
    /// The gateway holding the lease, by its name; `None` while nobody does (a failover).
    pub holder: Option<String>,
    /// This gateway's name.
    pub this_gateway: String,
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
    /// On a store several gateways share, who holds the chat connections: only the holder
    /// polls the platforms and sends; the others' cards and edits are sent by it.
    pub lease: Option<ChatLease>,
}

/// The running chat side: dispatcher, validated settings, session bindings, and what it shares
/// with the rest of the service (manager, config, audit) — never the service itself.
pub(crate) struct ChatRuntime {
    core: Arc<Core>,
    dispatcher: Arc<Dispatcher<SharedTokens>>,
    /// The dispatcher's tokens, to take over those of cards another gateway sent.
    tokens: SharedTokens,
    outbox: Arc<dyn ChatOutbox>,
    /// What gateways sharing the store share of chat, and this gateway's name among them.
    shared: Option<(Arc<dyn SharedChat>, String)>,
    /// Why this gateway lost the chat lease, once it has.
    lease_lost: watch::Sender<Option<String>>,
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
            lease: self.lease().await,
        }
    }

    /// Who holds the chat lease, when there is one.
    async fn lease(&self) -> Option<ChatLease> {
        let (shared, name) = self.shared.as_ref()?;
        let holder = match shared.lease_holder(CHAT_LEASE.to_owned()).await {
            Ok(holder) => holder,
            Err(error) => {
                tracing::error!(%error, "Cannot read who holds the chat lease for the status.");
                None
            }
        };
        Some(ChatLease {
            holder,
            this_gateway: name.clone(),
        })
    }

    /// Resolves, with why, once this gateway has lost the chat lease it held: it must stop
    /// (its connections and sends would now compete with the new holder's).
    pub(crate) fn lease_lost(&self) -> impl std::future::Future<Output = String> + Send + 'static {
        let mut lost = self.lease_lost.subscribe();
        async move {
            loop {
                if let Some(why) = lost.borrow_and_update().clone() {
                    return why;
                }
                if lost.changed().await.is_err() {
                    // The runtime is gone: it holds no lease any more, and never lost one.
                    std::future::pending::<()>().await;
                }
            }
        }
    }

    /// Milliseconds since the Unix epoch, for card expiry text and token checks.
    fn now_ms(&self) -> u64 {
        self.core.clock.now_ms()
    }
}

/// Who claims outbox attempts on a store several gateways share: the chat lease, not the
/// replica. The lease already lets one gateway send at a time, and a gateway taking it over
/// must take the dead holder's attempt under way back at once (as a restarted gateway takes
/// its own), not wait out the attempt's claim; attempt numbers still fence a late answer.
const LEASE_CLAIMANT: &str = "chat-lease-holder";

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
            if let Some(shared) = &setup.shared {
                connected
                    .channel
                    .share_replay_memory(Arc::new(shared::StoreReplays {
                        shared: Arc::clone(shared),
                        clock: Arc::clone(&core.clock),
                    }));
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
            claimant: match setup.shared {
                Some(_) => LEASE_CLAIMANT.to_owned(),
                None => setup.instance.clone(),
            },
        };
        let clock = Arc::clone(&core.clock);
        let tokens = SharedTokens::new(setup.shared.clone());
        let dispatcher = Arc::new(Dispatcher::new(
            channels,
            deliverer,
            TokenRegistry::new(tokens.clone()),
            Arc::new(journal),
            Arc::new(move || clock.now_ms()),
        ));
        let sessions = match &core.documents {
            Some(documents) => Sessions::shared(
                Arc::clone(documents),
                &setup.sessions_file,
                setup.platforms.clone(),
            )?,
            None => Sessions::open(&setup.sessions_file, setup.platforms.clone())?,
        };
        Ok(Arc::new(ChatRuntime {
            core,
            cards: CardIndex::new(Arc::clone(&dispatcher)),
            dispatcher,
            tokens,
            outbox: Arc::clone(&setup.outbox),
            shared: setup
                .shared
                .clone()
                .map(|shared| (shared, setup.instance.clone())),
            lease_lost: watch::Sender::new(None),
            approvals,
            platforms: setup.platforms.clone(),
            bot_usernames,
            strangers,
            sessions,
            stopped: Mutex::new(Vec::new()),
        }))
    }

    /// Runs chat: at once on a store of its own, else once this gateway holds the chat lease
    /// (see [`ChatRuntime::run_connections`]). Must run inside a tokio runtime.
    pub(crate) fn run(self: &Arc<Self>, setup: ChatSetup) {
        let Some((shared, name)) = self.shared.clone() else {
            self.run_connections(setup);
            return;
        };
        let runtime = Arc::clone(self);
        let shutdown = self.core.shutdown_signal();
        tokio::spawn(async move {
            let listening = runtime.listen();
            let acquiring = shared.acquire_lease(CHAT_LEASE.to_owned(), name);
            let held = tokio::select! {
                held = acquiring => held,
                () = shutdown => return,
            };
            // The adapters' intakes are handed from the listener to the connections: one
            // stops before the other starts.
            listening.stop().await;
            // Presses on cards the last holder sent arrive with its tokens.
            match shared.live_buttons().await {
                Ok(buttons) => {
                    let adopted = runtime.tokens.adopt(buttons);
                    tracing::info!(buttons = adopted, "Took over the chat connections.");
                }
                Err(error) => {
                    tracing::error!(%error, "Cannot read the buttons of cards sent before; presses on them are refused.");
                }
            }
            runtime.run_connections(setup);
            let why = held.lost.await;
            tracing::error!(reason = %why, "Lost the chat lease: this gateway must stop chat.");
            runtime.lease_lost.send_replace(Some(why));
        });
    }

    /// Subscribes to approval events, picks the outbox up where the last run (or the last
    /// lease holder) left it, and runs every adapter until shutdown.
    fn run_connections(self: &Arc<Self>, setup: ChatSetup) {
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
                () = inbound::run(runtime, receiver, Standing::Holder) => {}
                () = shutdown => {}
            }
        });
    }

    /// Until this gateway holds the chat lease: takes what the adapters may take here
    /// ([`Channel::listen`]: webhook-style inbound the load balancer routes to this gateway)
    /// and handles it as a [`Standing::Listener`].
    fn listen(self: &Arc<Self>) -> Listening {
        let (sender, receiver) = mpsc::channel::<Inbound>(256);
        let mut tasks: Vec<JoinHandle<()>> = self
            .dispatcher
            .channels
            .values()
            .map(|channel| {
                let channel = Arc::clone(channel);
                let sender = sender.clone();
                tokio::spawn(async move {
                    if let Err(error) = channel.listen(sender).await {
                        tracing::error!(channel = %channel.name(), %error, "Chat channel stopped listening for webhooks; they are answered 503 here.");
                    }
                })
            })
            .collect();
        drop(sender);
        let (stop, stopped) = oneshot::channel::<()>();
        let runtime = Arc::clone(self);
        let shutdown = self.core.shutdown_signal();
        tasks.push(tokio::spawn(async move {
            tokio::select! {
                () = inbound::run(runtime, receiver, Standing::Listener) => {}
                _ = stopped => {}
                () = shutdown => {}
            }
        }));
        Listening { stop, tasks }
    }
}

/// The listening side of a gateway waiting for the chat lease.
struct Listening {
    /// Dropped to stop: the inbound loop ends, its receiver with it, and each adapter's
    /// `listen` returns once its sender is closed.
    stop: oneshot::Sender<()>,
    tasks: Vec<JoinHandle<()>>,
}

impl Listening {
    /// Stops listening and waits until every adapter has let its intake go, so the
    /// connections' `run` attaches to an intake nobody else will detach.
    async fn stop(self) {
        drop(self.stop);
        for task in self.tasks {
            if let Err(error) = task.await {
                tracing::error!(%error, "A chat listener ended abnormally.");
            }
        }
    }
}
