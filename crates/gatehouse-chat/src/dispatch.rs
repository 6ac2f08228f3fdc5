//! Carrying out a [`DeliveryPlan`]: render each planned message, issue and bind button tokens,
//! send through the [`Deliverer`], fall back to the `/approve` text when no prompt arrived, and
//! later update or delete every delivered copy when the approval ends.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::future::join_all;

use crate::channel::Channel;
use crate::delivery::Deliverer;
use crate::error::ChatError;
use crate::plan::{DeliveryPlan, MessageKind};
use crate::render::{ApprovalView, Card, render_fallback, render_origin_notice, render_prompt};
use crate::route::{MessageLocator, Route};
use crate::token::{TokenRegistry, TokenStore};

/// The connected channels, by name.
pub type Channels = HashMap<String, Arc<dyn Channel>>;

/// One message that arrived; its locator is what the gateway stores with the approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivered {
    /// Where it was sent.
    pub route: Route,
    /// What it was.
    pub kind: MessageKind,
    /// Where it lives now.
    pub locator: MessageLocator,
}

/// The outcome of delivering one approval.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalDelivery {
    /// Every message that arrived, fallback included.
    pub delivered: Vec<Delivered>,
    /// Every route that did not get its message, with the final error.
    pub failed: Vec<(Route, ChatError)>,
}

/// Shared pieces every delivery needs.
pub struct Dispatcher<S: TokenStore> {
    /// The connected channels.
    pub channels: Channels,
    /// Retries and rate limits.
    pub deliverer: Deliverer,
    /// Button tokens.
    pub tokens: TokenRegistry<S>,
    /// The longest command shown in a card.
    pub max_command_chars: usize,
}

impl<S: TokenStore> Dispatcher<S> {
    /// Delivers every planned message concurrently (each channel still spaced by the deliverer),
    /// then the `/approve` fallback to the origin if no prompt arrived.
    pub async fn deliver(
        &self,
        plan: &DeliveryPlan,
        view: &ApprovalView,
        now_ms: u64,
    ) -> ApprovalDelivery {
        let sends = plan
            .messages
            .iter()
            .map(|message| self.deliver_one(&message.route, message.kind, view, now_ms));
        let mut outcome = ApprovalDelivery::default();
        for result in join_all(sends).await {
            match result {
                Ok(delivered) => outcome.delivered.push(delivered),
                Err(failed) => outcome.failed.push(failed),
            }
        }
        let prompt_routes: Vec<Route> = outcome
            .delivered
            .iter()
            .map(|delivered| delivered.route.clone())
            .collect();
        if let Some(origin) = plan.fallback_after(&prompt_routes) {
            let card = render_fallback(view, now_ms, self.max_command_chars);
            match self.send_card(origin, &card).await {
                Ok(locator) => outcome.delivered.push(Delivered {
                    route: origin.clone(),
                    kind: MessageKind::Fallback,
                    locator,
                }),
                Err(error) => outcome.failed.push((origin.clone(), error)),
            }
        }
        outcome
    }

    /// Replaces every delivered copy with `card` (a receipt, expiry or cancellation), or deletes
    /// copies on channels where `delete` says so (`cleanupAfterResolve`). Returns the failures.
    pub async fn finish(
        &self,
        copies: &[MessageLocator],
        card: &Card,
        delete: impl Fn(&str) -> bool,
    ) -> Vec<(MessageLocator, ChatError)> {
        let calls = copies.iter().map(|copy| {
            let delete = delete(&copy.channel);
            async move {
                let channel = self.channel(&copy.channel)?;
                if delete {
                    self.deliverer.delete(channel.as_ref(), copy).await
                } else {
                    self.deliverer.update(channel.as_ref(), copy, card).await
                }
            }
        });
        join_all(calls)
            .await
            .into_iter()
            .zip(copies)
            .filter_map(|(result, copy)| result.err().map(|error| (copy.clone(), error)))
            .collect()
    }

    async fn deliver_one(
        &self,
        route: &Route,
        kind: MessageKind,
        view: &ApprovalView,
        now_ms: u64,
    ) -> Result<Delivered, (Route, ChatError)> {
        let fail = |error| (route.clone(), error);
        let (card, tokens) = match kind {
            MessageKind::Card => {
                let tokens = self.tokens.issue(
                    &view.id,
                    &route.channel,
                    &view.offered_decisions(),
                    view.expires_at_ms,
                );
                let card = render_prompt(view, now_ms, self.max_command_chars)
                    .with_buttons(tokens.clone());
                (card, tokens)
            }
            MessageKind::TextPrompt => (
                render_prompt(view, now_ms, self.max_command_chars),
                Vec::new(),
            ),
            MessageKind::OriginNotice => (render_origin_notice(view), Vec::new()),
            MessageKind::Fallback => (
                render_fallback(view, now_ms, self.max_command_chars),
                Vec::new(),
            ),
        };
        let locator = self.send_card(route, &card).await.map_err(fail)?;
        self.tokens.bind_delivery(&tokens, &locator).map_err(fail)?;
        Ok(Delivered {
            route: route.clone(),
            kind,
            locator,
        })
    }

    async fn send_card(&self, route: &Route, card: &Card) -> Result<MessageLocator, ChatError> {
        let channel = self.channel(&route.channel)?;
        self.deliverer.send(channel.as_ref(), route, card).await
    }

    fn channel(&self, name: &str) -> Result<&Arc<dyn Channel>, ChatError> {
        self.channels.get(name).ok_or_else(|| ChatError::Permanent {
            channel: name.to_owned(),
            reason: "no such channel is connected".to_owned(),
        })
    }
}
