//! An `/elevated` directive carried out for a session, and the chat bindings that choose the
//! session: typed in a chat (the runtime's inbound side), or passed on by an agent host that
//! owns the chat itself (`elevated.directive`, `session.bind`).

use std::sync::Arc;

use gatehouse_chat::commands::{ElevatedContext, ElevatedRequest, ElevatedStep, elevated_step};
use gatehouse_chat::grammar::elevated::{ElevatedParse, parse_elevated};
use gatehouse_chat::replies::elevated_refusal_text;
use gatehouse_chat::sanitize::one_line;
use gatehouse_policy::elevated::{LevelChoices, SenderIdentity, authorize_sender};
use gatehouse_store::audit::AuditKind;
use serde_json::json;

use super::ChatRuntime;
use super::sessions::{BoundRoute, Sessions};
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::pipeline::invalid;
use crate::policy::elevated::{audit, default_level, gates};
use crate::service::{Core, Service};

/// The most of a session key a chat reply shows.
const SESSION_KEY_CHARS: usize = 80;

/// Carries out an `/elevated` request for `session_key` (or answers "no session bound") and
/// returns the reply; an authorized `set` is stored durably before the reply is returned.
/// `token` is the agent host's relaying it (`elevated.directive`; see [`Sessions::set_level`]).
pub(crate) fn directive(
    core: &Core,
    sessions: &Sessions,
    request: ElevatedRequest,
    sender: &SenderIdentity,
    session_key: Option<&str>,
    token: Option<&str>,
) -> Result<String, ServiceError> {
    let config = &core.config;
    let (gates, agent) = gates(config, None);
    let session = session_key.map(|key| LevelChoices {
        request: None,
        session: sessions.level(key),
        default: default_level(config),
    });
    let ctx = ElevatedContext {
        gates: &gates,
        agent: agent.as_ref(),
        session,
    };
    let refusal = session_key
        .and_then(|_| authorize_sender(&gates, agent.as_ref(), sender).err())
        .map(|denial| denial.to_string());
    match elevated_step(request, sender, ctx) {
        ElevatedStep::Reply(reply) => {
            if let (Some(reason), Some(key)) = (refusal, session_key) {
                audit(
                    core,
                    key,
                    sender,
                    json!({"outcome": "refused", "reason": reason}),
                );
            }
            Ok(reply)
        }
        ElevatedStep::Store { level, reply } => {
            if let Some(key) = session_key {
                sessions.set_level(key, level, sender, token)?;
                tracing::info!(session_key = ?key, level = %level.as_str(), sender_id = ?sender.id, channel = %sender.channel, "Elevated level set.");
                audit(
                    core,
                    key,
                    sender,
                    json!({"outcome": "set", "level": level.as_str()}),
                );
                // Name the session, so the owner sees which one their words reached.
                return Ok(format!(
                    "{reply} Session: {}.",
                    one_line(key, SESSION_KEY_CHARS)
                ));
            }
            Ok(reply)
        }
    }
}

/// Binds a session to a chat route for `token`'s agent host (`session.bind`, or a request's
/// `turnSource`), and records
/// every level the move dropped (see [`Sessions::bind`]) in the log and the audit log: the owner
/// should be able to tell why a level they set is gone.
pub(crate) fn bind_session(
    core: &Core,
    sessions: &Sessions,
    session_key: &str,
    route: BoundRoute,
    token: Option<&str>,
) -> Result<(), ServiceError> {
    for dropped in sessions.bind(session_key, route, token)? {
        tracing::warn!(session_key = ?dropped, bound = ?session_key, "Elevated level dropped: the session's chat binding moved.");
        core.audit(
            AuditKind::Decision,
            None,
            None,
            json!({
                "type": "elevated",
                "sessionKey": dropped,
                "outcome": "dropped",
                "reason": "binding-moved",
            }),
        );
    }
    Ok(())
}

/// A chat conversation to tie a session to, as an agent host names it.
#[derive(Debug, Clone, Default)]
pub struct BindInput {
    /// The session.
    pub session_key: String,
    /// The chat channel (`channels.<name>`).
    pub channel: String,
    /// The conversation: a chat id, or `user:<id>` for a direct one.
    pub to: String,
    /// The bot account, when several are configured.
    pub account_id: Option<String>,
    /// A thread or topic inside the chat.
    pub thread_id: Option<String>,
}

impl Service {
    /// `session.bind`: `/elevated` typed in this conversation acts on this session, for the
    /// caller's agent host.
    pub fn bind_session(&self, caller: &dyn Caller, input: BindInput) -> Result<(), ServiceError> {
        let chat = self.chat_for("session.bind")?;
        if input.session_key.trim().is_empty() {
            return Err(invalid("sessionKey must not be empty"));
        }
        if input.channel.trim().is_empty() || input.to.trim().is_empty() {
            return Err(invalid("channel and to must name a conversation"));
        }
        bind_session(
            self.core(),
            &chat.sessions,
            &input.session_key,
            BoundRoute {
                channel: input.channel,
                to: input.to,
                account_id: input.account_id,
                thread_id: input.thread_id,
            },
            Some(caller.name()),
        )
    }

    /// `elevated.directive`: the `/elevated` grammar, gates and storage for an agent host that
    /// owns the chat. `None` when `text` is no `/elevated` directive at all; else the reply to
    /// show the sender.
    pub fn elevated_directive(
        &self,
        caller: &dyn Caller,
        text: &str,
        sender: &SenderIdentity,
        session_key: &str,
    ) -> Result<Option<String>, ServiceError> {
        let chat = self.chat_for("elevated.directive")?;
        let request = match parse_elevated(text, None) {
            ElevatedParse::NotCommand => return Ok(None),
            ElevatedParse::Refused(refusal) => return Ok(Some(elevated_refusal_text(&refusal))),
            ElevatedParse::Query => ElevatedRequest::Query,
            ElevatedParse::Set(level) => ElevatedRequest::Set(level),
        };
        directive(
            self.core(),
            &chat.sessions,
            request,
            sender,
            Some(session_key),
            Some(caller.name()),
        )
        .map(Some)
    }

    /// The chat runtime, which keeps the session bindings `method` works on.
    fn chat_for(&self, method: &str) -> Result<&Arc<ChatRuntime>, ServiceError> {
        self.chat().ok_or_else(|| ServiceError::Internal {
            reason: format!("`{method}` called on a gateway started without chat sessions"),
        })
    }
}
