//! What to do with one inbound event: the shared front door behind every adapter, where the
//! grammars, the approver check, the token check and the elevated gates meet.
//!
//! Every function here is pure apart from logging refusals as security events; the gateway acts
//! on the returned value (resolving through the approval manager, storing a session level).

use gatehouse_policy::ApprovalDecision;
use gatehouse_policy::elevated::{
    AgentElevatedGates, ElevatedGates, ElevatedLevel, LevelChoices, SenderIdentity,
    authorize_sender, resolve_level,
};

use crate::channel::ButtonPress;
use crate::config::ChatApprovals;
use crate::error::ChatError;
use crate::grammar::approve::{ApproveParse, parse_approve, parse_decision};
use crate::grammar::elevated::{ElevatedParse, parse_elevated};
use crate::grammar::start::{Conversation, is_start};
use crate::replies::{
    ApproveOutcome, ElevatedOutcome, approve_outcome_text, approve_refusal_text,
    elevated_outcome_text, elevated_refusal_text,
};
use crate::token::{TokenClaim, TokenRegistry, TokenStore};

/// The context a text message arrived in.
#[derive(Debug, Clone, Copy)]
pub struct TextContext<'a> {
    /// Who sent it.
    pub sender: &'a SenderIdentity,
    /// This bot's handle, for `/approve@<bot>`.
    pub bot_username: Option<&'a str>,
    /// The approval whose card the message replies to, if it is a reply to one.
    pub replied_to_approval: Option<&'a str>,
    /// Where it was typed: the bare words `start` and `help` count only in a direct
    /// conversation with the bot.
    pub conversation: Conversation,
}

/// An `/elevated` request that passed the grammar; the gates come next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElevatedRequest {
    /// Report the level in force.
    Query,
    /// Store this level for the session.
    Set(ElevatedLevel),
}

/// What the gateway should do with a text message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextAction {
    /// Ordinary chat: no reply.
    Ignore,
    /// Send this reply and do nothing else.
    Reply(String),
    /// An approver's decision: resolve `target` (a full id or a prefix) through the approval
    /// manager, then reply with [`approve_outcome_text`].
    Resolve {
        /// The id or prefix as typed.
        target: String,
        /// The decision.
        decision: ApprovalDecision,
    },
    /// An `/elevated` request: find the session bound to the chat, then call [`elevated_step`].
    Elevated(ElevatedRequest),
    /// `/start` or `/help`: tell the sender who they are here, with
    /// [`crate::introduction::introduction_text`].
    Introduce,
}

/// Reads a text message: `/approve` (and bare `approve`), `/elevated`, `/start` (`/help`), or a
/// one-word decision sent as a reply to a card. `/approve` from anyone but a configured approver
/// of the sender's channel is refused here and logged.
pub fn interpret_text(text: &str, ctx: TextContext<'_>, approvals: &ChatApprovals) -> TextAction {
    if is_start(text, ctx.bot_username, ctx.conversation) {
        return TextAction::Introduce;
    }
    let (target, decision) = match parse_approve(text, ctx.bot_username) {
        ApproveParse::Refused(refusal) => return TextAction::Reply(approve_refusal_text(&refusal)),
        ApproveParse::Command(command) => (command.target, command.decision),
        ApproveParse::NotCommand => match reply_decision(text, ctx.replied_to_approval) {
            Some(found) => found,
            None => return interpret_elevated(text, ctx.bot_username),
        },
    };
    if !may_decide(approvals, ctx.sender, "text") {
        return TextAction::Reply(approve_outcome_text(&ApproveOutcome::NotAuthorized));
    }
    TextAction::Resolve { target, decision }
}

/// The approver check shared by text and buttons; refusals are logged as security events.
fn may_decide(approvals: &ChatApprovals, sender: &SenderIdentity, via: &'static str) -> bool {
    let allowed = approvals.is_approver(&sender.channel, &sender.id);
    if !allowed {
        tracing::warn!(
            target: "security",
            channel = %sender.channel,
            sender_id = %sender.id,
            via,
            "Approval decision from a non-approver refused."
        );
    }
    allowed
}

/// A single decision word replying to a card decides that card's approval.
fn reply_decision(text: &str, replied_to: Option<&str>) -> Option<(String, ApprovalDecision)> {
    let approval_id = replied_to?;
    let mut words = text.split_whitespace();
    let (Some(word), None) = (words.next(), words.next()) else {
        return None;
    };
    parse_decision(word).map(|decision| (approval_id.to_owned(), decision))
}

fn interpret_elevated(text: &str, bot_username: Option<&str>) -> TextAction {
    match parse_elevated(text, bot_username) {
        ElevatedParse::NotCommand => TextAction::Ignore,
        ElevatedParse::Query => TextAction::Elevated(ElevatedRequest::Query),
        ElevatedParse::Set(level) => TextAction::Elevated(ElevatedRequest::Set(level)),
        ElevatedParse::Refused(refusal) => TextAction::Reply(elevated_refusal_text(&refusal)),
    }
}

/// The gates and the session an `/elevated` request acts on.
#[derive(Debug, Clone, Copy)]
pub struct ElevatedContext<'a> {
    /// `tools.elevated`.
    pub gates: &'a ElevatedGates,
    /// The bound session's agent gates, when that agent has any.
    pub agent: Option<&'a AgentElevatedGates>,
    /// The bound session's level choices (its stored level and the default); `None` when no
    /// session is bound to the chat.
    pub session: Option<LevelChoices>,
}

/// What to do for an authorized-or-not `/elevated` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElevatedStep {
    /// Reply and change nothing.
    Reply(String),
    /// Store `level` as the session's level (durably), then reply.
    Store {
        /// The level to store.
        level: ElevatedLevel,
        /// The reply to send once stored.
        reply: String,
    },
}

/// Applies the gates to an `/elevated` request. Queries are gated too: the level of a session
/// is only shown to people who may change it. The sender is checked before the binding, so
/// someone outside the gates learns nothing about the chat, and is logged as a security event.
pub fn elevated_step(
    request: ElevatedRequest,
    sender: &SenderIdentity,
    ctx: ElevatedContext<'_>,
) -> ElevatedStep {
    if let Err(denial) = authorize_sender(ctx.gates, ctx.agent, sender) {
        tracing::warn!(
            target: "security",
            channel = %sender.channel,
            sender_id = %sender.id,
            reason = %denial,
            "Elevated directive refused."
        );
        return ElevatedStep::Reply(elevated_outcome_text(&ElevatedOutcome::NotAuthorized(
            denial,
        )));
    }
    let Some(choices) = ctx.session else {
        return ElevatedStep::Reply(elevated_outcome_text(&ElevatedOutcome::NoSessionBound));
    };
    match request {
        ElevatedRequest::Query => {
            let resolved = resolve_level(choices, ctx.gates, ctx.agent);
            ElevatedStep::Reply(elevated_outcome_text(&ElevatedOutcome::Current {
                level: resolved.level,
                source: resolved.source,
            }))
        }
        ElevatedRequest::Set(level) => ElevatedStep::Store {
            level,
            reply: elevated_outcome_text(&ElevatedOutcome::Set { level }),
        },
    }
}

/// Why a button press was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PressRefusal {
    /// The presser is not a configured approver; the buttons stay for someone who is.
    NotApprover,
    /// The token was refused (unknown, wrong chat or message, expired).
    Token(ChatError),
}

impl PressRefusal {
    /// The private answer to the presser.
    pub fn text(&self) -> &'static str {
        match self {
            PressRefusal::NotApprover => "Only approvers can decide.",
            PressRefusal::Token(ChatError::TokenExpired { .. }) => {
                "This approval has expired and is no longer pending."
            }
            PressRefusal::Token(_) => "This button is not valid here.",
        }
    }
}

/// Checks a button press: the presser must be an approver of the channel, and the token must
/// belong to this chat and message and be unexpired. The approver check comes first, so a
/// non-approver learns nothing about tokens.
pub fn check_press<S: TokenStore>(
    press: &ButtonPress,
    tokens: &TokenRegistry<S>,
    approvals: &ChatApprovals,
    now_ms: u64,
) -> Result<TokenClaim, PressRefusal> {
    if !may_decide(approvals, &press.sender, "button") {
        return Err(PressRefusal::NotApprover);
    }
    tokens
        .verify(&press.token, &press.message, now_ms)
        .map_err(|error| {
            tracing::warn!(
                target: "security",
                channel = %press.sender.channel,
                sender_id = %press.sender.id,
                error = %error,
                "Button token refused."
            );
            PressRefusal::Token(error)
        })
}
