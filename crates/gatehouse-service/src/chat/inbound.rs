//! Chat events to decisions: a button press or an `/approve` message passes the chat core's
//! checks, is resolved through the approval manager as the person who sent it, and is answered
//! where it came from.

use std::sync::Arc;

use gatehouse_approvals::ResolveOutcome as StoreOutcome;
use gatehouse_approvals::{ApprovalError, ApprovalRecord, IdDisclosure};
use gatehouse_chat::channel::{ButtonPress, Channel, Inbound, InboundText};
use gatehouse_chat::commands::{
    ElevatedRequest, PressRefusal, TextAction, TextContext, check_press, interpret_text,
};
use gatehouse_chat::grammar::start::Conversation;
use gatehouse_chat::introduction::{Introduction, Role, introduction_text};
use gatehouse_chat::render::{Card, CardState, ResolveOutcome, SHORT_ID_LEN};
use gatehouse_chat::replies::{ApproveOutcome, approve_outcome_text};
use gatehouse_chat::route::{Destination, MessageLocator, Route};
use gatehouse_chat::strangers::ReplyReach;
use gatehouse_policy::ApprovalDecision;
use gatehouse_policy::elevated::{ElevatedLevel, SenderIdentity, authorize_sender};
use tokio::sync::mpsc;
use uuid::Uuid;

use super::ChatRuntime;
use super::directive::directive;
use super::shared::live_tokens;
use super::view::{approval_view, stored};
use crate::policy::elevated::gates;

/// Whether this gateway holds the chat connections, which decides what it answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Standing {
    /// It holds them (or is alone on its store): it issued the tokens and keeps the
    /// stranger-reply windows.
    Holder,
    /// Another gateway sharing the store holds them; this one takes only what a webhook
    /// delivers here (`Channel::listen`). Tokens are read from the shared store per press.
    /// Every reply to a stranger is held back: the `strangerReplies` windows live in the
    /// holder's memory, and counting them again here would let each gateway answer its own
    /// share of a flood.
    Listener,
}

/// Handles inbound chat events until every adapter has stopped.
pub(super) async fn run(
    runtime: Arc<ChatRuntime>,
    mut receiver: mpsc::Receiver<Inbound>,
    standing: Standing,
) {
    while let Some(event) = receiver.recv().await {
        let runtime = Arc::clone(&runtime);
        tokio::spawn(async move {
            match event {
                Inbound::Press(press) => on_press(&runtime, press, standing).await,
                Inbound::Text(text) => on_text(&runtime, text, standing).await,
            }
        });
    }
}

async fn on_press(runtime: &ChatRuntime, press: ButtonPress, standing: Standing) {
    let Some(channel) = runtime.dispatcher.channels.get(&press.interaction.channel) else {
        return;
    };
    let checked = match (standing, &runtime.shared) {
        (Standing::Listener, Some((shared, _))) => {
            match live_tokens(shared.as_ref(), &press.token).await {
                Ok(tokens) => check_press(&press, &tokens, &runtime.approvals, runtime.now_ms()),
                Err(error) => {
                    // Fail closed: nothing decided, and the presser is told to try again.
                    tracing::error!(%error, "Cannot read the shared store's buttons to check a press.");
                    answer_press(runtime, channel.as_ref(), &press, UNCHECKED).await;
                    return;
                }
            }
        }
        _ => check_press(
            &press,
            &runtime.dispatcher.tokens,
            &runtime.approvals,
            runtime.now_ms(),
        ),
    };
    let answer = match checked {
        Err(PressRefusal::NotApprover)
            if standing == Standing::Listener
                || !runtime.strangers.allow(
                    &press.interaction.channel,
                    &press.message.chat_id,
                    &press.sender.id,
                    ReplyReach::Interaction,
                    runtime.now_ms(),
                ) =>
        {
            held_back(&press.sender);
            return;
        }
        Err(refusal) => refusal.text().to_owned(),
        Ok(claim) => resolve(runtime, &claim.approval_id, claim.decision, &press.sender).await,
    };
    answer_press(runtime, channel.as_ref(), &press, &answer).await;
}

/// The answer to a press that could not be checked against the shared store.
const UNCHECKED: &str = "The press could not be checked; press again or use the Control UI.";

/// Answers `press` privately with `answer`.
async fn answer_press(
    runtime: &ChatRuntime,
    channel: &dyn Channel,
    press: &ButtonPress,
    answer: &str,
) {
    if let Err(error) = runtime
        .dispatcher
        .deliverer
        .answer(channel, &press.interaction, answer)
        .await
    {
        tracing::warn!(channel = %press.interaction.channel, error = %error, "Cannot answer a button press.");
    }
}

async fn on_text(runtime: &ChatRuntime, text: InboundText, standing: Standing) {
    let channel_name = text.message.channel.clone();
    let Some(channel) = runtime.dispatcher.channels.get(&channel_name).cloned() else {
        return;
    };
    let replied_to = match &text.reply_to {
        Some(message) => replied_card(runtime, message, standing).await,
        None => None,
    };
    let ctx = TextContext {
        sender: &text.sender,
        bot_username: runtime.bot_usernames.get(&channel_name).map(String::as_str),
        replied_to_approval: replied_to.as_deref(),
        conversation: if text.is_direct {
            Conversation::Direct
        } else {
            Conversation::Shared
        },
    };
    let reply = match interpret_text(&text.text, ctx, &runtime.approvals) {
        TextAction::Ignore => return,
        TextAction::Reply(reply) => reply,
        TextAction::Resolve { target, decision } => {
            decide_typed(runtime, &target, decision, &text).await
        }
        TextAction::Elevated(request) => elevated(runtime, &text, request),
        TextAction::Introduce => introduce(runtime, &text.sender),
    };
    if !may_decide_anything(runtime, &text.sender)
        && (standing == Standing::Listener
            || !runtime.strangers.allow(
                &channel_name,
                &text.message.chat_id,
                &text.sender.id,
                reach(&text),
                runtime.now_ms(),
            ))
    {
        held_back(&text.sender);
        return;
    }
    send_reply(runtime, channel.as_ref(), &text, &reply).await;
}

/// The approval the card `message` shows, for a reply to it: from the cards the holder keeps
/// in memory, or, on a gateway without the chat lease, from the shared store while the
/// approval is pending (a store that cannot be read names none: the reply must then name it).
async fn replied_card(
    runtime: &ChatRuntime,
    message: &MessageLocator,
    standing: Standing,
) -> Option<String> {
    match (standing, &runtime.shared) {
        (Standing::Listener, Some((shared, _))) => {
            match shared.pending_card_approval(stored(message)).await {
                Ok(approval) => approval,
                Err(error) => {
                    tracing::error!(%error, "Cannot read which approval a replied-to card shows.");
                    None
                }
            }
        }
        _ => runtime.cards.approval(message),
    }
}

/// Whether `sender` may decide anything on their channel (an approver there, or admitted by
/// `tools.elevated.allowFrom`): replies to anyone else are held to `strangerReplies`.
fn may_decide_anything(runtime: &ChatRuntime, sender: &SenderIdentity) -> bool {
    runtime.approvals.is_approver(&sender.channel, &sender.id) || may_elevate(runtime, sender)
}

/// Whether `tools.elevated.allowFrom` admits `sender` (before any agent's own gates).
fn may_elevate(runtime: &ChatRuntime, sender: &SenderIdentity) -> bool {
    let (gates, _) = gates(&runtime.core.config, None);
    authorize_sender(&gates, None, sender).is_ok()
}

/// The answer to `/start`: the sender's id and standing on their channel. It names no
/// approval, so it may go to anyone (within `strangerReplies`, like every reply to a stranger).
fn introduce(runtime: &ChatRuntime, sender: &SenderIdentity) -> String {
    let channel = sender.channel.as_str();
    let role = if runtime.approvals.is_approver(channel, &sender.id) {
        Role::Approver {
            cards: runtime
                .approvals
                .native_client(channel)
                .map(|client| client.target()),
        }
    } else {
        Role::NotApprover
    };
    introduction_text(&Introduction {
        channel,
        sender_id: &sender.id,
        role,
        elevated: may_elevate(runtime, sender),
    })
}

/// How a reply to `text` reaches its sender.
fn reach(text: &InboundText) -> ReplyReach {
    if text.interaction.is_some() {
        ReplyReach::Interaction
    } else if text.private_reply.is_some() || text.is_direct {
        ReplyReach::Private
    } else {
        ReplyReach::Public
    }
}

/// A reply to a stranger over `strangerReplies` is dropped, never queued (the refusal itself
/// was logged as a security event already).
fn held_back(sender: &SenderIdentity) {
    tracing::debug!(
        target: "security",
        channel = %sender.channel,
        sender_id = %sender.id,
        "Reply to someone who may not decide held back (strangerReplies)."
    );
}

/// `/elevated` acts on the session bound to the thread it was typed in, else to the chat, as
/// the adapter's platform names the place. An `off` typed in a thread also reaches the session
/// bound to the whole chat: a thread binding must not hide that session's level from the owner,
/// and `off` only ever narrows.
fn elevated(runtime: &ChatRuntime, text: &InboundText, request: ElevatedRequest) -> String {
    let sessions = &runtime.sessions;
    let here = sessions.bound_in(&text.message.channel, &text.place);
    let first = here.thread.clone().or_else(|| here.chat.clone());
    let mut targets = vec![first];
    if request == ElevatedRequest::Set(ElevatedLevel::Off)
        && text.place.in_thread()
        && here.chat.is_some()
        && !targets.contains(&here.chat)
    {
        targets.push(here.chat);
    }
    let replies: Vec<String> = targets
        .iter()
        .map(|session| {
            directive(
                &runtime.core,
                sessions,
                request,
                &text.sender,
                session.as_deref(),
                None,
            )
            .unwrap_or_else(|error| {
                tracing::error!(error = %error, "Cannot store an elevated level.");
                "The level could not be stored; nothing changed.".to_owned()
            })
        })
        .collect();
    replies.join("\n")
}

/// Answers privately when the message was an interaction, or typed in a shared chat on a
/// platform that can answer its sender alone (every reply there is private: the card's receipt
/// tells the chat what was decided); else in the chat (and thread) it was typed in.
async fn send_reply(runtime: &ChatRuntime, channel: &dyn Channel, text: &InboundText, reply: &str) {
    let deliverer = &runtime.dispatcher.deliverer;
    let private = text.interaction.as_ref().or(text.private_reply.as_ref());
    let result = if let Some(interaction) = private {
        deliverer.answer(channel, interaction, reply).await
    } else {
        let route = Route {
            channel: text.message.channel.clone(),
            account_id: text.message.account_id.clone(),
            destination: Destination::Chat(text.message.chat_id.clone()),
            thread_id: text.message.thread_id.clone(),
        };
        let card = Card {
            state: CardState::Notice,
            title: reply.to_owned(),
            fields: Vec::new(),
            command: None,
            note: None,
            buttons: Vec::new(),
            expires_at_ms: None,
        };
        deliverer.send(channel, &route, &card).await.map(drop)
    };
    if let Err(error) = result {
        tracing::warn!(channel = %text.message.channel, error = %error, "Cannot reply in chat.");
    }
}

/// A decision typed in a chat: the id is resolved first, then decided only if the approval was
/// shown to this channel's approvers (or `decideUndelivered` says any will do), and
/// allow-always only for a command the card showed in full. Returns the reply.
async fn decide_typed(
    runtime: &ChatRuntime,
    target: &str,
    decision: ApprovalDecision,
    text: &InboundText,
) -> String {
    let channel = text.message.channel.as_str();
    let record = match runtime
        .core
        .manager
        .get(target, IdDisclosure::Revealed)
        .await
    {
        Ok(record) => record,
        Err(ApprovalError::AmbiguousPrefix { count, candidates }) => {
            let candidates = candidates.unwrap_or_default();
            let listed = if replies_privately(text) {
                shown_among(runtime, &candidates, channel).await
            } else {
                Vec::new()
            };
            return approve_outcome_text(&ApproveOutcome::Ambiguous {
                prefix: target.to_owned(),
                count,
                listed,
            });
        }
        Err(error) => return refusal_text(target, error),
    };
    if !shown_here(runtime, &record, channel) {
        tracing::warn!(
            target: "security",
            channel,
            sender_id = %text.sender.id,
            approval_id = %record.id,
            "Chat decision on an approval never shown on this channel refused."
        );
        return approve_outcome_text(&ApproveOutcome::NotShownHere {
            approval_id: record.id,
            channel: channel.to_owned(),
        });
    }
    let max = runtime.dispatcher.max_command_chars;
    let shown = approval_view(&record.id, &record.request, record.expires_at_ms, true, max);
    if decision == ApprovalDecision::AllowAlways && !shown.allow_always_offered {
        return approve_outcome_text(&ApproveOutcome::AlwaysNeedsFullCommand {
            approval_id: record.id,
        });
    }
    resolve(runtime, &record.id, decision, &text.sender).await
}

/// Whether an approval was shown to `channel`'s approvers: a card, a text prompt or the
/// fallback was delivered there (the store keeps no origin notice with its approval: a notice
/// shows no command and does not count), or
/// the channel decides undelivered approvals by configuration.
fn shown_here(runtime: &ChatRuntime, record: &ApprovalRecord, channel: &str) -> bool {
    runtime.approvals.decides_undelivered(channel)
        || record
            .messages
            .iter()
            .any(|message| message.channel == channel)
}

/// The ids among `candidates` shown on `channel`, the only ones a reply there may name.
async fn shown_among(runtime: &ChatRuntime, candidates: &[Uuid], channel: &str) -> Vec<String> {
    let mut shown = Vec::new();
    for id in candidates {
        let record = runtime
            .core
            .manager
            .get(&id.to_string(), IdDisclosure::Hidden)
            .await;
        if let Ok(record) = record
            && shown_here(runtime, &record, channel)
        {
            shown.push(record.id);
        }
    }
    shown
}

/// Whether the reply to `text` reaches its sender alone: an interaction's private answer, an
/// ephemeral answer in a shared chat, or a direct conversation with the bot. Lists of ids go
/// only into such replies.
fn replies_privately(text: &InboundText) -> bool {
    text.interaction.is_some() || text.private_reply.is_some() || text.is_direct
}

/// Resolves as `sender` and returns the reply text: the approver check already passed.
async fn resolve(
    runtime: &ChatRuntime,
    target: &str,
    decision: ApprovalDecision,
    sender: &SenderIdentity,
) -> String {
    let by = decided_by(sender);
    let manager = &runtime.core.manager;
    let outcome = match manager
        .resolve(target, decision, &by, IdDisclosure::Hidden)
        .await
    {
        Ok(resolved) => match resolved.outcome {
            StoreOutcome::Applied(record) | StoreOutcome::Repeated(record) => {
                tracing::info!(approval_id = %record.id, %decision, resolved_by = ?by, "Approval decided in chat.");
                ApproveOutcome::Resolved {
                    approval_id: record.id,
                    decision,
                }
            }
            StoreOutcome::Rejected { winner } => ApproveOutcome::AlreadyResolved {
                winner: ResolveOutcome {
                    decision: winner.decision.unwrap_or(ApprovalDecision::Deny),
                    decided_by: winner.resolved_by.unwrap_or_else(|| "someone".into()),
                },
                approval_id: winner.id,
            },
        },
        Err(error) => return refusal_text(target, error),
    };
    approve_outcome_text(&outcome)
}

fn refusal_text(target: &str, error: ApprovalError) -> String {
    let outcome = match error {
        ApprovalError::InvalidKey { .. }
        | ApprovalError::InvalidId { .. }
        | ApprovalError::Unknown { .. }
        | ApprovalError::UnknownPrefix => ApproveOutcome::Unknown {
            target: target.to_owned(),
        },
        // Presses and checked typed decisions name a full id; a prefix that became ambiguous
        // meanwhile is named by count only.
        ApprovalError::AmbiguousPrefix { count, .. } => ApproveOutcome::Ambiguous {
            prefix: target.to_owned(),
            count,
            listed: Vec::new(),
        },
        ApprovalError::Expired { id, .. } => ApproveOutcome::Expired {
            approval_id: id.to_string(),
        },
        ApprovalError::Cancelled { id, reason } => {
            let short: String = id.to_string().chars().take(SHORT_ID_LEN).collect();
            return format!("Approval {short} was cancelled ({reason}); nothing to decide.");
        }
        ApprovalError::AlreadyResolved {
            id,
            decision,
            resolved_by,
        } => ApproveOutcome::AlreadyResolved {
            approval_id: id.to_string(),
            winner: ResolveOutcome {
                decision,
                decided_by: resolved_by.unwrap_or_else(|| "someone else".into()),
            },
        },
        ApprovalError::DecisionNotOffered { decision, .. } => {
            return format!(
                "{decision} is not offered for this approval; choose another decision."
            );
        }
        other => {
            tracing::error!(error = %other, "Chat decision could not be recorded.");
            return "The decision could not be recorded; try again or use the Control UI.".into();
        }
    };
    approve_outcome_text(&outcome)
}

/// Who decided, as stored and shown on receipts: the channel and the sender's platform id, which
/// the audit trail can pin to one account, with the handle beside it for people (a handle can be
/// renamed or later taken by someone else).
fn decided_by(sender: &SenderIdentity) -> String {
    match sender.username.as_deref() {
        Some(name) => format!("{}:{} (@{name})", sender.channel, sender.id),
        None => format!("{}:{}", sender.channel, sender.id),
    }
}
