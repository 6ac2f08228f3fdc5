//! Session bindings and `/elevated` directives for agent hosts that own the chat themselves:
//! `session.bind` ties a session to a conversation, `elevated.directive` passes `/elevated`
//! through the same grammar, gates and storage as a directive typed in a chat.

use std::sync::Arc;

use gatehouse_chat::commands::ElevatedRequest;
use gatehouse_chat::grammar::elevated::{ElevatedParse, parse_elevated};
use gatehouse_chat::replies::elevated_refusal_text;
use gatehouse_policy::elevated::SenderIdentity;

use crate::caller::Caller;
use crate::chat::{BoundRoute, ChatRuntime, bind_session, directive};
use crate::error::ServiceError;
use crate::pipeline::invalid;
use crate::service::Service;

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
