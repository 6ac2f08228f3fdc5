//! An `/elevated` directive carried out for a session, and the chat bindings that choose the
//! session: typed in a chat (the runtime's inbound side), or passed on by an agent host that
//! owns the chat itself (the `sessions` use cases).

use gatehouse_chat::commands::{ElevatedContext, ElevatedRequest, ElevatedStep, elevated_step};
use gatehouse_chat::sanitize::one_line;
use gatehouse_policy::elevated::{LevelChoices, SenderIdentity, authorize_sender};
use gatehouse_store::audit::AuditKind;
use serde_json::json;

use super::sessions::{BoundRoute, Sessions};
use crate::core::Core;
use crate::error::ServiceError;
use crate::policy::elevated::{audit, default_level, gates};

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
