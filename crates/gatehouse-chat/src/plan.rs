//! Which routes get which message for one approval: a pure function of the request's metadata
//! and the validated configuration, so every forwarding rule is testable without a platform.
//!
//! Native clients are planned first (cards with buttons to approvers' DMs and/or the origin
//! chat); forwarding then adds text prompts only to routes no native client already serves.

use crate::config::{ChatApprovals, ForwardMode, NativeClient, NativeTarget};
use crate::route::{Destination, Route, TurnSource};

/// What the planner needs to know about a request.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestMeta<'a> {
    /// The requesting agent.
    pub agent_id: Option<&'a str>,
    /// The session key the request belongs to.
    pub session_key: Option<&'a str>,
    /// The conversation the request came from.
    pub turn_source: Option<&'a TurnSource>,
}

/// The kind of message planned for a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// An approval card with decision buttons, from a native approval client.
    Card,
    /// A forwarded text prompt with `/approve` instructions and no buttons.
    TextPrompt,
    /// The short origin notice that the card went to approvers' DMs. It does not show the
    /// command, so it does not count as showing the approval to anyone.
    OriginNotice,
    /// The prompt with the exact `/approve` commands left in the origin chat when no prompt
    /// arrived anywhere; never planned, only sent by the dispatcher after the fact.
    Fallback,
}

/// One planned delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedMessage {
    /// Where it goes.
    pub route: Route,
    /// What it is.
    pub kind: MessageKind,
}

/// Everything to deliver for one approval, in delivery order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeliveryPlan {
    /// The messages, each route at most once.
    pub messages: Vec<PlannedMessage>,
    /// The origin route, which receives the `/approve` fallback if no prompt is delivered.
    pub fallback_route: Option<Route>,
}

impl DeliveryPlan {
    /// Whether a message kind lets someone decide (cards and text prompts; notices do not).
    fn is_prompt(kind: MessageKind) -> bool {
        matches!(kind, MessageKind::Card | MessageKind::TextPrompt)
    }

    /// The route to send the `/approve` fallback to, given the routes where a prompt was
    /// delivered: `Some` only when prompts were planned, none arrived and there is an origin.
    pub fn fallback_after(&self, delivered: &[Route]) -> Option<&Route> {
        let prompts: Vec<&Route> = self
            .messages
            .iter()
            .filter(|message| Self::is_prompt(message.kind))
            .map(|message| &message.route)
            .collect();
        let none_arrived = !prompts.iter().any(|route| delivered.contains(route));
        (!prompts.is_empty() && none_arrived)
            .then_some(self.fallback_route.as_ref())
            .flatten()
    }
}

/// Plans the deliveries for one approval request.
pub fn plan_delivery(meta: RequestMeta<'_>, config: &ChatApprovals) -> DeliveryPlan {
    let origin = meta.turn_source.map(TurnSource::route);
    let mut plan = DeliveryPlan {
        messages: Vec::new(),
        fallback_route: origin.clone(),
    };
    let mut origin_served_natively = false;
    for client in config.native.iter().filter(|c| admits(c, meta)) {
        let origin_here = origin.as_ref().filter(|o| o.channel == client.channel);
        origin_served_natively |= origin_here.is_some();
        let mut dm_cards = 0;
        if matches!(client.target, NativeTarget::Dm | NativeTarget::Both) {
            for approver in &client.approvers {
                let route = Route::dm(&client.channel, client.account_id.as_deref(), approver);
                dm_cards += usize::from(push(&mut plan, route, MessageKind::Card));
            }
        }
        if let Some(origin) = origin_here {
            let kind = match client.target {
                NativeTarget::Channel | NativeTarget::Both => Some(MessageKind::Card),
                NativeTarget::Dm if dm_cards > 0 => Some(MessageKind::OriginNotice),
                NativeTarget::Dm => None,
            };
            if let Some(kind) = kind {
                push(&mut plan, origin.clone(), kind);
            }
        }
    }
    if let Some(forwarding) = &config.forwarding
        && forwarding.agents.admits(meta.agent_id)
        && forwarding.sessions.admits(meta.session_key)
    {
        let session = matches!(forwarding.mode, ForwardMode::Session | ForwardMode::Both);
        if session
            && !origin_served_natively
            && let Some(origin) = &origin
        {
            push(&mut plan, origin.clone(), MessageKind::TextPrompt);
        }
        if matches!(forwarding.mode, ForwardMode::Targets | ForwardMode::Both) {
            for target in &forwarding.targets {
                push(&mut plan, target.clone(), MessageKind::TextPrompt);
            }
        }
    }
    plan
}

fn admits(client: &NativeClient, meta: RequestMeta<'_>) -> bool {
    client.agents.admits(meta.agent_id) && client.sessions.admits(meta.session_key)
}

/// Adds `route` unless some message already goes to the same conversation; a conversation gets
/// one message, and the first planned (a card before a text prompt) wins.
fn push(plan: &mut DeliveryPlan, route: Route, kind: MessageKind) -> bool {
    if plan
        .messages
        .iter()
        .any(|message| same_conversation(&message.route, &route))
    {
        return false;
    }
    plan.messages.push(PlannedMessage { route, kind });
    true
}

/// Equal routes, or two routes into one person's DM: a DM is one conversation whatever thread a
/// request started in, so the approver gets one card there, not one per thread.
fn same_conversation(a: &Route, b: &Route) -> bool {
    a == b
        || (matches!(a.destination, Destination::Dm(_))
            && a.channel == b.channel
            && a.account_id == b.account_id
            && a.destination == b.destination)
}
