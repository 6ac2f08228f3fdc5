//! Calling a [`Channel`] politely and persistently: per-channel spacing between calls, a 429's
//! `retry_after` pausing the whole channel (calls already waiting for their turn included; see
//! [`Throttle`]), transient errors retried with bounded exponential backoff, and the last
//! failure of each target kept for the Control UI and `gatehouse doctor`.
//!
//! Adapters get this for free: it is written against the trait, not a platform.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::sleep;

use crate::channel::{Channel, InteractionRef};
use crate::error::ChatError;
use crate::render::Card;
use crate::route::{MessageLocator, Route};
use crate::throttle::Throttle;

/// How often and how long to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts per call, the first included; 429s count too, so a platform that never stops
    /// rate limiting cannot hold a call forever.
    pub max_attempts: u32,
    /// The delay after the first transient failure; doubled after each further one.
    pub base_delay: Duration,
    /// The cap on a backoff delay.
    pub max_delay: Duration,
    /// The longest `retry_after` honoured; a longer one fails the call instead of stalling it.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(300),
        }
    }
}

impl RetryPolicy {
    /// The backoff before attempt `attempt + 1`, after `attempt` transient failures.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        self.base_delay.saturating_mul(factor).min(self.max_delay)
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

/// The last failure recorded for one target.
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

/// Retries, spacing and failure records shared by every call to every channel.
#[derive(Debug, Default)]
pub struct Deliverer {
    policy: RetryPolicy,
    min_interval: HashMap<String, Duration>,
    /// One lane per channel.
    throttle: Throttle<String>,
    failures: Mutex<HashMap<(String, String), TargetFailure>>,
}

impl Deliverer {
    /// A deliverer with `policy` and no spacing between calls.
    pub fn new(policy: RetryPolicy) -> Self {
        Self {
            policy,
            ..Self::default()
        }
    }

    /// Spaces calls to `channel` at least `interval` apart (e.g. Telegram's one message per
    /// second per chat, applied conservatively per channel).
    pub fn with_min_interval(mut self, channel: &str, interval: Duration) -> Self {
        self.min_interval.insert(channel.to_owned(), interval);
        self
    }

    /// Sends `card` to `route`, retrying as the policy allows.
    pub async fn send<C: Channel + ?Sized>(
        &self,
        channel: &C,
        route: &Route,
        card: &Card,
    ) -> Result<MessageLocator, ChatError> {
        let target = route.to_string();
        self.call(channel.name(), &target, Operation::Send, || {
            channel.send(route, card)
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
        let target = describe(message);
        self.call(channel.name(), &target, Operation::Update, || {
            channel.update(message, card)
        })
        .await
    }

    /// Deletes a delivered message.
    pub async fn delete<C: Channel + ?Sized>(
        &self,
        channel: &C,
        message: &MessageLocator,
    ) -> Result<(), ChatError> {
        let target = describe(message);
        self.call(channel.name(), &target, Operation::Delete, || {
            channel.delete(message)
        })
        .await
    }

    /// Answers an interaction privately.
    pub async fn answer<C: Channel + ?Sized>(
        &self,
        channel: &C,
        interaction: &InteractionRef,
        text: &str,
    ) -> Result<(), ChatError> {
        let target = format!("{}:interaction", interaction.channel);
        self.call(channel.name(), &target, Operation::Answer, || {
            channel.answer(interaction, text)
        })
        .await
    }

    /// The last unrecovered failure of every target, for the Control UI and `gatehouse doctor`.
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
        mut attempt_once: F,
    ) -> Result<T, ChatError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, ChatError>>,
    {
        let mut attempts = 0;
        let mut transient_failures = 0;
        loop {
            self.wait_turn(channel).await;
            attempts += 1;
            let error = match attempt_once().await {
                Ok(value) => {
                    self.clear_failure(channel, target);
                    return Ok(value);
                }
                Err(error) => error,
            };
            let give_up = !error.is_retryable() || attempts >= self.policy.max_attempts;
            match &error {
                ChatError::RateLimited { retry_after, .. }
                    if !give_up && *retry_after <= self.policy.max_retry_after =>
                {
                    tracing::info!(
                        channel,
                        target,
                        retry_after_ms = u64::try_from(retry_after.as_millis()).unwrap_or(u64::MAX),
                        "Channel rate limited the call; waiting."
                    );
                    self.pause(channel, *retry_after);
                }
                ChatError::Transient { .. } if !give_up => {
                    transient_failures += 1;
                    let delay = self.policy.backoff(transient_failures);
                    tracing::info!(
                        channel,
                        target,
                        attempt = attempts,
                        error = %error,
                        "Channel call failed; retrying."
                    );
                    sleep(delay).await;
                }
                _ => {
                    tracing::warn!(
                        channel,
                        target,
                        attempts,
                        error = %error,
                        "Channel call failed for good."
                    );
                    self.record_failure(TargetFailure {
                        channel: channel.to_owned(),
                        target: target.to_owned(),
                        operation,
                        error: error.clone(),
                        attempts,
                    });
                    return Err(error);
                }
            }
        }
    }

    /// Waits for this call's turn on `channel`.
    async fn wait_turn(&self, channel: &str) {
        let interval = self.min_interval.get(channel).copied().unwrap_or_default();
        self.throttle.wait(&channel.to_owned(), interval).await;
    }

    /// Holds every call to `channel` until `retry_after` from now, those already waiting too.
    fn pause(&self, channel: &str, retry_after: Duration) {
        self.throttle.pause(&channel.to_owned(), retry_after);
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

fn describe(message: &MessageLocator) -> String {
    format!(
        "{}:chat:{}:message:{}",
        message.channel, message.chat_id, message.message_id
    )
}
