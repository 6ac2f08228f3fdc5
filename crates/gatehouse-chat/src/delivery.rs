//! Calling a [`Channel`] politely: every call waits for its turn on the channel's [`Pacer`]
//! (the platform's limits, 429 pauses, urgency, calls in flight), and a 429 pauses exactly what
//! it names.
//!
//! Two kinds of caller use it. The [`Dispatcher`](crate::dispatch::Dispatcher) makes one
//! attempt at a time ([`Deliverer::turn`], [`Deliverer::after_failure`]) and keeps retrying
//! approval messages itself, durably, until they are delivered and edited. Replies and
//! interaction answers, which nothing records, go through [`Deliverer::send`],
//! [`Deliverer::answer`] and the like, which retry up to [`RetryPolicy::max_attempts`] and keep
//! the last failure of each target for `gateway.status`.
//!
//! Adapters get this for free: it is written against the trait, not a platform.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rand::Rng;
use tokio::time::sleep;

use crate::channel::{Channel, InteractionRef};
use crate::error::ChatError;
use crate::render::Card;
use crate::route::{Conversation, Destination, MessageLocator, Route, SendKey};
use crate::throttle::{Call, CallKind, Pacer, Pacing, Permit, Priority};

/// How often and how long to retry (OpenClaw's `channels.<name>.retry`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Attempts per reply or answer, the first included; 429s count too, so a platform that
    /// never stops rate limiting cannot hold one forever. Approval messages are not bounded by
    /// it: they are retried until delivered and edited (`retry.attempts`).
    pub max_attempts: u32,
    /// The delay after the first failure; doubled after each further one (`retry.minDelayMs`).
    pub base_delay: Duration,
    /// The cap on a delay, and the delay between tries of a refused approval message
    /// (`retry.maxDelayMs`).
    pub max_delay: Duration,
    /// Each delay is moved by up to this fraction either way, so calls refused together are
    /// not all tried again in the same instant (`retry.jitter`, 0 to 1).
    pub jitter: f64,
    /// The longest `retry_after` a reply waits out; a longer one fails it instead of stalling
    /// it. Approval messages wait out any pause the platform asks for.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// OpenClaw's defaults: 3 attempts, 500 ms doubling to 30 s, 10 % jitter.
    fn default() -> Self {
        Self {
            max_attempts: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            jitter: 0.1,
            max_retry_after: Duration::from_secs(300),
        }
    }
}

impl RetryPolicy {
    /// The backoff after `failures` failures in a row, before jitter.
    pub fn backoff(&self, failures: u32) -> Duration {
        let factor = 2u32.saturating_pow(failures.saturating_sub(1));
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }

    /// The wait before the next try after `error`, the `failures`-th in a row, with jitter: a
    /// permanent refusal waits the longest delay (it may be fixed by a person, not by time),
    /// a 429 as long as the platform asked.
    pub fn delay_after(&self, error: &ChatError, failures: u32) -> Duration {
        let base = match error {
            ChatError::RateLimited { retry_after, .. } => return *retry_after,
            ChatError::Transient { .. } => self.backoff(failures),
            _ => self.max_delay,
        };
        self.jittered(base)
    }

    fn jittered(&self, delay: Duration) -> Duration {
        let jitter = self.jitter.clamp(0.0, 1.0);
        if jitter == 0.0 {
            return delay;
        }
        let factor = 1.0 + rand::rng().random_range(-jitter..=jitter);
        delay.mul_f64(factor)
    }
}

/// A channel's delivery settings: its platform's limits (as its adapter states them, with the
/// operator's overrides), its retry policy and when a chat's queue becomes a digest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeliverySettings {
    /// The limits its calls are paced by.
    pub pacing: Pacing,
    /// Retries and backoff.
    pub retry: RetryPolicy,
    /// A chat with more approval messages than this waiting gets one digest instead.
    pub digest_after: usize,
}

/// The default `digest_after`: about five seconds behind at Telegram's one message per
/// second.
pub const DEFAULT_DIGEST_AFTER: usize = 5;

impl Default for DeliverySettings {
    fn default() -> Self {
        DeliverySettings {
            pacing: Pacing::default(),
            retry: RetryPolicy::default(),
            digest_after: DEFAULT_DIGEST_AFTER,
        }
    }
}

/// Which call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Delivering a new message.
    Send,
    /// Editing a delivered message.
    Update,
    /// Deleting a delivered message.
    Delete,
    /// Answering an interaction.
    Answer,
}

/// The last failure recorded for one target of a reply or answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetFailure {
    /// The channel name.
    pub channel: String,
    /// The target, as a route or message description.
    pub target: String,
    /// The call that failed.
    pub operation: Operation,
    /// The final error.
    pub error: ChatError,
    /// How many attempts were made.
    pub attempts: u32,
}

/// Pacers, settings and failure records shared by every call to every channel.
#[derive(Debug, Default)]
pub struct Deliverer {
    default: DeliverySettings,
    settings: HashMap<String, DeliverySettings>,
    /// One per channel, made on its first call.
    pacers: Mutex<HashMap<String, Arc<Pacer>>>,
    failures: Mutex<HashMap<(String, String), TargetFailure>>,
}

impl Deliverer {
    /// A deliverer retrying with `policy`, pacing nothing but calls in flight until
    /// [`Deliverer::with_settings`] says more.
    pub fn new(policy: RetryPolicy) -> Self {
        Self {
            default: DeliverySettings {
                retry: policy,
                ..DeliverySettings::default()
            },
            ..Self::default()
        }
    }

    /// Uses `settings` for `channel`.
    pub fn with_settings(mut self, channel: &str, settings: DeliverySettings) -> Self {
        self.settings.insert(channel.to_owned(), settings);
        self
    }

    /// `channel`'s settings.
    pub fn settings(&self, channel: &str) -> DeliverySettings {
        self.settings.get(channel).copied().unwrap_or(self.default)
    }

    /// `channel`'s pacer.
    pub fn pacer(&self, channel: &str) -> Arc<Pacer> {
        let mut pacers = self.pacers.lock().unwrap_or_else(PoisonError::into_inner);
        let pacing = self.settings(channel).pacing;
        Arc::clone(
            pacers
                .entry(channel.to_owned())
                .or_insert_with(|| Arc::new(Pacer::new(pacing))),
        )
    }

    /// Waits for `call`'s turn on `channel`; the call is under way until the permit drops.
    pub async fn turn(&self, channel: &str, call: Call) -> Permit {
        self.pacer(channel).turn(call).await
    }

    /// Acts on a failed call of `kind` into `lane`: a 429 pauses what it names on `channel`.
    pub fn after_failure(
        &self,
        channel: &str,
        lane: Option<&Conversation>,
        kind: CallKind,
        error: &ChatError,
    ) {
        if let ChatError::RateLimited {
            retry_after, scope, ..
        } = error
        {
            tracing::info!(
                channel,
                conversation = %lane.map(ToString::to_string).unwrap_or_default(),
                %scope,
                retry_after_ms = u64::try_from(retry_after.as_millis()).unwrap_or(u64::MAX),
                "Chat platform rate limited a call; pausing what it named."
            );
            self.pacer(channel).pause(lane, kind, *scope, *retry_after);
        }
    }

    /// Sends `card` to `route` (a reply), retrying as the policy allows; every attempt carries
    /// one key, so a platform with idempotency delivers it once.
    pub async fn send<C: Channel + ?Sized>(
        &self,
        channel: &C,
        route: &Route,
        card: &Card,
    ) -> Result<MessageLocator, ChatError> {
        let key = SendKey::random();
        let call = Call {
            lane: Some(route.conversation()),
            group: channel.is_group(&route.destination),
            kind: CallKind::Send,
            priority: Priority::Reply,
        };
        let target = route.to_string();
        self.call(channel.name(), &target, Operation::Send, call, || {
            channel.send(route, card, &key)
        })
        .await
    }

    /// Replaces a delivered message with `card`.
    pub async fn update<C: Channel + ?Sized>(
        &self,
        channel: &C,
        message: &MessageLocator,
        card: &Card,
    ) -> Result<(), ChatError> {
        let call = message_call(channel, message, CallKind::Update);
        self.call(
            channel.name(),
            &describe(message),
            Operation::Update,
            call,
            || channel.update(message, card),
        )
        .await
    }

    /// Deletes a delivered message.
    pub async fn delete<C: Channel + ?Sized>(
        &self,
        channel: &C,
        message: &MessageLocator,
    ) -> Result<(), ChatError> {
        let call = message_call(channel, message, CallKind::Delete);
        self.call(
            channel.name(),
            &describe(message),
            Operation::Delete,
            call,
            || channel.delete(message),
        )
        .await
    }

    /// Answers an interaction privately, ahead of every other call.
    pub async fn answer<C: Channel + ?Sized>(
        &self,
        channel: &C,
        interaction: &InteractionRef,
        text: &str,
    ) -> Result<(), ChatError> {
        let target = format!("{}:interaction", interaction.channel);
        let call = Call {
            lane: None,
            group: false,
            kind: CallKind::Answer,
            priority: Priority::Answer,
        };
        self.call(channel.name(), &target, Operation::Answer, call, || {
            channel.answer(interaction, text)
        })
        .await
    }

    /// The last unrecovered failure of every reply and answer target.
    pub fn failures(&self) -> Vec<TargetFailure> {
        let failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let mut list: Vec<TargetFailure> = failures.values().cloned().collect();
        list.sort_by(|a, b| (&a.channel, &a.target).cmp(&(&b.channel, &b.target)));
        list
    }

    async fn call<T, F, Fut>(
        &self,
        channel: &str,
        target: &str,
        operation: Operation,
        call: Call,
        mut attempt_once: F,
    ) -> Result<T, ChatError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, ChatError>>,
    {
        let policy = self.settings(channel).retry;
        let mut attempts = 0;
        let mut failures = 0;
        loop {
            let permit = self.turn(channel, call.clone()).await;
            attempts += 1;
            let outcome = attempt_once().await;
            drop(permit);
            let error = match outcome {
                Ok(value) => {
                    self.clear_failure(channel, target);
                    return Ok(value);
                }
                Err(error) => error,
            };
            failures += 1;
            let too_long = matches!(&error, ChatError::RateLimited { retry_after, .. }
                if *retry_after > policy.max_retry_after);
            let give_up = !error.is_retryable() || attempts >= policy.max_attempts || too_long;
            self.after_failure(channel, call.lane.as_ref(), call.kind, &error);
            if give_up {
                tracing::warn!(channel, target, attempts, error = %error, "Chat call failed for good.");
                self.record_failure(TargetFailure {
                    channel: channel.to_owned(),
                    target: target.to_owned(),
                    operation,
                    error: error.clone(),
                    attempts,
                });
                return Err(error);
            }
            if let ChatError::Transient { .. } = error {
                tracing::info!(channel, target, attempt = attempts, error = %error, "Chat call failed; retrying.");
                sleep(policy.delay_after(&error, failures)).await;
            }
        }
    }

    fn record_failure(&self, failure: TargetFailure) {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        failures.insert((failure.channel.clone(), failure.target.clone()), failure);
    }

    fn clear_failure(&self, channel: &str, target: &str) {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        failures.remove(&(channel.to_owned(), target.to_owned()));
    }
}

/// An edit or delete of `message`, paced in the conversation it is in.
fn message_call<C: Channel + ?Sized>(
    channel: &C,
    message: &MessageLocator,
    kind: CallKind,
) -> Call {
    let destination = Destination::Chat(message.chat_id.clone());
    Call {
        group: channel.is_group(&destination),
        lane: Some(Conversation {
            account_id: message.account_id.clone(),
            destination,
        }),
        kind,
        priority: Priority::Edit,
    }
}

/// A delivered message as status lines name it.
pub fn describe(message: &MessageLocator) -> String {
    format!(
        "{}:chat:{}:message:{}",
        message.channel, message.chat_id, message.message_id
    )
}
