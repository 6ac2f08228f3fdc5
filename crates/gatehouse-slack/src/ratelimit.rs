//! Slack's per-method rate limits, kept before a call is made so a burst of cards does not earn a
//! 429 in the first place. Retries and `Retry-After` stay with the chat core's `Deliverer`; this
//! only says which calls Slack counts together (a method, per conversation where Slack counts per
//! conversation) and how far apart, and paces them on the chat core's one [`Throttle`].

use std::collections::HashMap;
use std::time::Duration;

use gatehouse_chat::throttle::Throttle;

/// What Slack counts a method's limit against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every call of the method in the workspace (the numbered tiers).
    Workspace,
    /// Calls into one conversation (`chat.postMessage`'s one message per second per channel).
    Conversation,
}

/// The spacing for one method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodLimit {
    /// The least time between two calls in the same scope.
    pub interval: Duration,
    /// What the interval is counted against.
    pub scope: Scope,
}

/// Spacing per Web API method; methods not listed are not spaced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RateTable {
    limits: HashMap<&'static str, MethodLimit>,
}

/// Tier 3 is "50+ per minute", tier 4 "100+ per minute"; spacing at the floor never bursts past.
const TIER_3: Duration = Duration::from_millis(1200);
const TIER_4: Duration = Duration::from_millis(600);

impl RateTable {
    /// Slack's published limits for the methods this adapter calls.
    pub fn slack_tiers() -> Self {
        let per_workspace = |interval| MethodLimit {
            interval,
            scope: Scope::Workspace,
        };
        Self::default()
            .with_limit(
                "chat.postMessage",
                MethodLimit {
                    interval: Duration::from_secs(1),
                    scope: Scope::Conversation,
                },
            )
            .with_limit("chat.update", per_workspace(TIER_3))
            .with_limit("chat.delete", per_workspace(TIER_3))
            .with_limit("conversations.open", per_workspace(TIER_3))
            .with_limit("chat.postEphemeral", per_workspace(TIER_4))
    }

    /// No spacing at all: for tests against a local fake, where exact timing is not the point.
    pub fn unlimited() -> Self {
        Self::default()
    }

    /// Sets (or replaces) the limit for `method`.
    pub fn with_limit(mut self, method: &'static str, limit: MethodLimit) -> Self {
        self.limits.insert(method, limit);
        self
    }

    /// The limit for `method`, if it has one.
    pub fn limit(&self, method: &str) -> Option<MethodLimit> {
        self.limits.get(method).copied()
    }
}

/// Paces calls per method (and conversation) according to a [`RateTable`]: one lane of the
/// chat core's [`Throttle`] per method, or per method and conversation.
#[derive(Debug)]
pub(crate) struct Pacing {
    table: RateTable,
    throttle: Throttle<(&'static str, String)>,
}

impl Pacing {
    pub(crate) fn new(table: RateTable) -> Self {
        Self {
            table,
            throttle: Throttle::new(),
        }
    }

    /// Waits until `method` may be called into `conversation`.
    pub(crate) async fn wait(&self, method: &'static str, conversation: &str) {
        let Some(limit) = self.table.limit(method) else {
            return;
        };
        let lane = match limit.scope {
            Scope::Workspace => (method, String::new()),
            Scope::Conversation => (method, conversation.to_owned()),
        };
        self.throttle.wait(&lane, limit.interval).await;
    }
}

#[cfg(test)]
mod tests {
    use tokio::time::Instant;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn spaces_posts_per_conversation_but_not_across_conversations() {
        let throttle = Pacing::new(RateTable::slack_tiers());
        let start = Instant::now();
        throttle.wait("chat.postMessage", "C1").await;
        throttle.wait("chat.postMessage", "C2").await;
        assert_eq!(start.elapsed(), Duration::ZERO);
        throttle.wait("chat.postMessage", "C1").await;
        assert_eq!(start.elapsed(), Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn spaces_tier_three_methods_across_the_workspace() {
        let throttle = Pacing::new(RateTable::slack_tiers());
        let start = Instant::now();
        throttle.wait("chat.update", "C1").await;
        throttle.wait("chat.update", "C2").await;
        assert_eq!(start.elapsed(), TIER_3);
    }

    #[tokio::test(start_paused = true)]
    async fn leaves_unlisted_methods_alone() {
        let throttle = Pacing::new(RateTable::unlimited());
        let start = Instant::now();
        throttle.wait("chat.postMessage", "C1").await;
        throttle.wait("chat.postMessage", "C1").await;
        assert_eq!(start.elapsed(), Duration::ZERO);
    }
}
