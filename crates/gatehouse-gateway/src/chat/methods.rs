//! `session.bind` and `elevated.directive`: how agent hosts tie a session to a chat route, and
//! how hosts that own the chat themselves pass `/elevated` through the same gates.

use gatehouse_chat::commands::ElevatedRequest;
use gatehouse_chat::grammar::elevated::{ElevatedParse, parse_elevated};
use gatehouse_chat::replies::elevated_refusal_text;
use gatehouse_policy::elevated::SenderIdentity;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::methods::{Call, exec_of};
use crate::wire::chat::SenderJson;

use super::ChatRuntime;
use super::elevated::{bind_session, directive};
use super::sessions::BoundRoute;

/// `session.bind` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct BindParams {
    session_key: String,
    channel: String,
    to: String,
    #[serde(default)]
    account_id: Option<String>,
    #[serde(default, deserialize_with = "id_text")]
    thread_id: Option<String>,
}

/// `session.bind` result.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BindResult {
    bound: bool,
}

/// `elevated.directive` params: the sender as the host's platform identified them.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct DirectiveParams {
    text: String,
    sender: SenderJson,
    session_key: String,
}

/// `elevated.directive` result.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DirectiveResult {
    /// Whether the text was an `/elevated` directive at all.
    handled: bool,
    /// The reply to show the sender; absent when not handled.
    #[serde(skip_serializing_if = "Option::is_none")]
    reply: Option<String>,
}

fn chat_of(call: &Call, method: &str) -> Result<std::sync::Arc<ChatRuntime>, Error> {
    call.state.chat().cloned().ok_or_else(|| Error::Internal {
        reason: format!("`{method}` called on a gateway started without chat sessions"),
    })
}

/// `session.bind`: `/elevated` typed in this conversation acts on this session. `agent` scope.
pub(crate) async fn bind(call: Call, params: BindParams) -> Result<BindResult, Error> {
    let chat = chat_of(&call, "session.bind")?;
    let invalid = |reason: &str| Error::InvalidParams {
        method: "session.bind".into(),
        reason: reason.to_owned(),
    };
    if params.session_key.trim().is_empty() {
        return Err(invalid("sessionKey must not be empty"));
    }
    if params.channel.trim().is_empty() || params.to.trim().is_empty() {
        return Err(invalid("channel and to must name a conversation"));
    }
    bind_session(
        &exec_of(&call)?,
        &chat.sessions,
        &params.session_key,
        BoundRoute {
            channel: params.channel,
            to: params.to,
            account_id: params.account_id,
            thread_id: params.thread_id,
        },
        Some(call.caller.name()),
    )?;
    Ok(BindResult { bound: true })
}

/// `elevated.directive`: the `/elevated` grammar, gates and storage for a host that owns the
/// chat; returns the reply text. `agent` scope.
pub(crate) async fn elevated_directive(
    call: Call,
    params: DirectiveParams,
) -> Result<DirectiveResult, Error> {
    let chat = chat_of(&call, "elevated.directive")?;
    let exec = exec_of(&call)?;
    let request = match parse_elevated(&params.text, None) {
        ElevatedParse::NotCommand => {
            return Ok(DirectiveResult {
                handled: false,
                reply: None,
            });
        }
        ElevatedParse::Refused(refusal) => {
            return Ok(DirectiveResult {
                handled: true,
                reply: Some(elevated_refusal_text(&refusal)),
            });
        }
        ElevatedParse::Query => ElevatedRequest::Query,
        ElevatedParse::Set(level) => ElevatedRequest::Set(level),
    };
    let sender = SenderIdentity::from(&params.sender);
    let reply = directive(
        &exec,
        &chat.sessions,
        request,
        &sender,
        Some(&params.session_key),
        Some(call.caller.name()),
    )?;
    Ok(DirectiveResult {
        handled: true,
        reply: Some(reply),
    })
}

/// Thread ids arrive as numbers (Telegram topics) or strings (Slack `ts`).
fn id_text<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Id {
        Text(String),
        Number(i64),
    }
    Ok(Option::<Id>::deserialize(deserializer)?.map(|id| match id {
        Id::Text(text) => text,
        Id::Number(number) => number.to_string(),
    }))
}
