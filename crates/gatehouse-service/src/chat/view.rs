//! Conversions between the approval manager's records and the chat core's plain types: the
//! chat core never sees a store type, and the store never sees a chat type.

use gatehouse_approvals::{ApprovalRequest, DeliveredMessage};
use gatehouse_chat::plan::RequestMeta;
use gatehouse_chat::render::ApprovalView;
use gatehouse_chat::route::{MessageLocator, TurnSource};

/// What a card shows about `request`.
pub(super) fn approval_view(
    id: &str,
    request: &ApprovalRequest,
    expires_at_ms: u64,
    allow_always_offered: bool,
) -> ApprovalView {
    ApprovalView {
        id: id.to_owned(),
        command: request.command.clone(),
        cwd: request.cwd.clone(),
        agent_id: request.agent_id.clone(),
        host: request.host.clone(),
        resolved_path: request.resolved_path.clone(),
        env_keys: request.env_keys.clone(),
        expires_at_ms,
        allow_always_offered,
    }
}

/// The request's `turnSource` as the planner reads it; one without a channel or a chat is no
/// route at all rather than a guess.
pub(super) fn turn_source(request: &ApprovalRequest) -> Option<TurnSource> {
    let source = request.turn_source.as_ref()?;
    let channel = source.channel.as_deref().filter(|c| !c.trim().is_empty())?;
    let to = source.to.as_deref().filter(|to| !to.trim().is_empty())?;
    Some(TurnSource {
        channel: channel.to_owned(),
        account_id: source.account_id.clone(),
        to: to.to_owned(),
        thread_id: source.thread_id.clone(),
        dm_user_id: dm_user_of(channel, to),
    })
}

/// The user on the other side when `to` names a direct conversation, so the planner can see that
/// the origin *is* an approver's DM and deliver only once. Only spellings that say so for certain
/// count: Discord `user:<id>` / `<@id>`, a positive Telegram chat id (a private chat's id is the
/// user's id), a Slack user id (`U…`/`W…`); anything else stays a chat.
fn dm_user_of(channel: &str, to: &str) -> Option<String> {
    let to = to.trim();
    let digits = |id: &str| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
    match channel {
        "discord" => {
            let id = to
                .strip_prefix("user:")
                .or_else(|| {
                    to.strip_prefix("<@!")
                        .and_then(|rest| rest.strip_suffix('>'))
                })
                .or_else(|| {
                    to.strip_prefix("<@")
                        .and_then(|rest| rest.strip_suffix('>'))
                })?;
            digits(id).then(|| id.to_owned())
        }
        "telegram" => {
            let id = to.strip_prefix("user:").unwrap_or(to);
            (digits(id) && id != "0").then(|| id.to_owned())
        }
        "slack" => {
            let id = to.strip_prefix("user:").unwrap_or(to);
            let user_like = (id.starts_with('U') || id.starts_with('W'))
                && id.len() > 1
                && id
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
            user_like.then(|| id.to_owned())
        }
        _ => None,
    }
}

/// The planner's view of a request.
pub(super) fn request_meta<'a>(
    request: &'a ApprovalRequest,
    origin: Option<&'a TurnSource>,
) -> RequestMeta<'a> {
    RequestMeta {
        agent_id: request.agent_id.as_deref(),
        session_key: request.session_key.as_deref(),
        turn_source: origin,
    }
}

/// A delivered message as the store keeps it.
pub(super) fn stored(locator: &MessageLocator) -> DeliveredMessage {
    DeliveredMessage {
        channel: locator.channel.clone(),
        account_id: locator.account_id.clone(),
        chat_id: locator.chat_id.clone(),
        message_id: locator.message_id.clone(),
        thread_id: locator.thread_id.clone(),
    }
}

/// A stored message as the channel edits it.
pub(super) fn locator(message: &DeliveredMessage) -> MessageLocator {
    MessageLocator {
        channel: message.channel.clone(),
        account_id: message.account_id.clone(),
        chat_id: message.chat_id.clone(),
        message_id: message.message_id.clone(),
        thread_id: message.thread_id.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::dm_user_of;

    #[test]
    fn recognises_only_spellings_that_name_a_direct_conversation() {
        let cases = [
            ("discord", "user:5000", Some("5000")),
            ("discord", "<@5000>", Some("5000")),
            ("discord", "<@!5000>", Some("5000")),
            ("discord", "4000", None),
            ("discord", "user:abc", None),
            ("telegram", "12345", Some("12345")),
            ("telegram", "-100123", None),
            ("telegram", "0", None),
            ("slack", "U0ALICE", Some("U0ALICE")),
            ("slack", "user:W123", Some("W123")),
            ("slack", "C0OPS", None),
            ("slack", "D0DM", None),
            ("whatsapp", "12345", None),
        ];
        for (channel, to, expected) in cases {
            assert_eq!(
                dm_user_of(channel, to).as_deref(),
                expected,
                "{channel} {to}"
            );
        }
    }
}
