//! Conversions between the approval manager's records and the chat core's plain types: the
//! chat core never sees a store type, and the store never sees a chat type.

use gatehouse_approvals::{ApprovalRequest, DeliveredMessage};
use gatehouse_chat::Platforms;
use gatehouse_chat::plan::RequestMeta;
use gatehouse_chat::render::{ApprovalView, ChainView, ToolCard, shows_in_full};
use gatehouse_chat::route::{MessageLocator, TurnSource};
use gatehouse_policy::tool_call::{Grant, GrantScope};

/// What a card shows about `request`. Allow-always is offered only when the card shows the
/// command (or the tool call's parameters) in full within `max_command_chars`: nobody adds a
/// pattern or a grant for something they could not read to its end.
pub(super) fn approval_view(
    id: &str,
    request: &ApprovalRequest,
    expires_at_ms: u64,
    allow_always_offered: bool,
    max_command_chars: usize,
) -> ApprovalView {
    let mut view = shown_view(id, request, expires_at_ms, allow_always_offered);
    if !shows_in_full(&view.shown_text(), max_command_chars) {
        view.allow_always_offered = false;
        if let Some(tool) = &mut view.tool {
            tool.allow_always_covers = None;
        }
    }
    view
}

/// `request` as the chat core's view, allow-always as the manager offered it.
fn shown_view(
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
        chain: request.summary.as_ref().map(|summary| ChainView {
            // `lines()` puts one line per program first, in the words every surface uses.
            programs: summary
                .lines()
                .into_iter()
                .take(summary.programs.len())
                .collect(),
            allow_always_patterns: summary.allow_always_patterns.clone(),
        }),
        tool: request.tool.as_ref().map(|tool| ToolCard {
            tool: tool.tool.clone(),
            params: tool.params.clone(),
            title: tool.title.clone(),
            description: tool.description.clone(),
            severity: tool.severity.as_str().to_owned(),
            allow_always_covers: tool
                .grant
                .as_ref()
                .filter(|_| allow_always_offered)
                .map(grant_words),
        }),
    }
}

/// What a grant covers, as approvers read it before answering allow-always.
pub(crate) fn grant_words(grant: &Grant) -> String {
    match &grant.scope {
        GrantScope::Tool => format!("{} calls that touch no file and no URL", grant.tool),
        GrantScope::Paths(paths) => {
            let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            format!("{} at or under {}", grant.tool, paths.join(", "))
        }
        GrantScope::Hosts(hosts) => {
            let hosts: Vec<&str> = hosts.iter().map(String::as_str).collect();
            format!("{} of host {}", grant.tool, hosts.join(", "))
        }
    }
}

/// The request's `turnSource` as the planner reads it; one without a channel or a chat is no
/// route at all rather than a guess. Its platform says whether `to` is a direct conversation
/// (so the planner can see that the origin *is* an approver's DM and deliver only once); only
/// spellings that say so for certain count, anything else stays a chat.
pub(super) fn turn_source(request: &ApprovalRequest, platforms: &Platforms) -> Option<TurnSource> {
    let source = request.turn_source.as_ref()?;
    let channel = source.channel.as_deref().filter(|c| !c.trim().is_empty())?;
    let to = source.to.as_deref().filter(|to| !to.trim().is_empty())?;
    Some(TurnSource {
        channel: channel.to_owned(),
        account_id: source.account_id.clone(),
        to: to.to_owned(),
        thread_id: source.thread_id.clone(),
        dm_user_id: platforms.direct_chat_user(channel, to.trim()),
    })
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
