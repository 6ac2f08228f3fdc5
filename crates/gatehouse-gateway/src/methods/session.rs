//! `session.bind` and `elevated.directive`: how agent hosts tie a session to a chat route, and
//! how hosts that own the chat themselves pass `/elevated` through the same gates (the
//! service's chat runtime keeps both).

use gatehouse_policy::elevated::SenderIdentity;
use gatehouse_service::BindInput;

use crate::error::Error;
use crate::methods::{Call, service_of};
use crate::wire::chat::{BindParams, BindResult, DirectiveParams, DirectiveResult};

/// `session.bind`: `/elevated` typed in this conversation acts on this session. `agent` scope.
pub(super) async fn bind(call: Call, params: BindParams) -> Result<BindResult, Error> {
    const METHOD: &str = "session.bind";
    let input = BindInput {
        session_key: params.session_key,
        channel: params.channel,
        to: params.to,
        account_id: params.account_id,
        thread_id: params.thread_id,
    };
    service_of(&call)?
        .bind_session(call.caller.as_ref(), input)
        .map_err(|error| Error::service(METHOD, error))?;
    Ok(BindResult { bound: true })
}

/// `elevated.directive`: the `/elevated` grammar, gates and storage for a host that owns the
/// chat; returns the reply text. `agent` scope.
pub(super) async fn elevated_directive(
    call: Call,
    params: DirectiveParams,
) -> Result<DirectiveResult, Error> {
    const METHOD: &str = "elevated.directive";
    let sender = SenderIdentity::from(&params.sender);
    let reply = service_of(&call)?
        .elevated_directive(
            call.caller.as_ref(),
            &params.text,
            &sender,
            &params.session_key,
        )
        .map_err(|error| Error::service(METHOD, error))?;
    Ok(DirectiveResult {
        handled: reply.is_some(),
        reply,
    })
}
