//! `gateway.*`: the gateway describing itself.

use crate::auth::Principal;
use crate::error::Error;
use crate::methods::Call;
use crate::scope::{Access, Scope};
use crate::wire::{CallerInfo, NoParams, OperatorClient, ServerInfo, StatusResult, TokensResult};

/// `gateway.status`: version, uptime, open connections and who is asking; any scope. Operators
/// also see the chat channels, the operator clients connected and the pending count: who can
/// answer approvals now, and how many wait.
pub(super) async fn status(call: Call, _: NoParams) -> Result<StatusResult, Error> {
    let events = call.state.events();
    let operator = call.caller.allows(Access::Scope(Scope::Approvals));
    // Chat targets are approvers' chat ids and delivery errors: for operators only.
    let chat = match call.state.service().filter(|_| operator) {
        Some(service) => service.chat_status().await.map(Into::into),
        None => None,
    };
    Ok(StatusResult {
        server: ServerInfo::current(events.instance(), events.started_at_ms()),
        uptime_ms: u64::try_from(call.state.uptime().as_millis()).unwrap_or(u64::MAX),
        connections: call.state.open_connections(),
        caller: caller_info(&call.caller),
        chat,
        operator_clients: operator.then(|| {
            events
                .clients(Access::Scope(Scope::Approvals))
                .into_iter()
                .map(|(token, client)| OperatorClient { token, client })
                .collect()
        }),
        pending_approvals: call
            .state
            .service()
            .filter(|_| operator)
            .map(gatehouse_service::Service::pending_count),
    })
}

/// `gateway.tokens`: configured token names and scopes, never secrets; `operator.admin` only.
pub(super) async fn tokens(call: Call, _: NoParams) -> Result<TokensResult, Error> {
    Ok(TokensResult {
        tokens: call.state.principals().map(caller_info).collect(),
    })
}

fn caller_info(principal: &Principal) -> CallerInfo {
    CallerInfo {
        name: principal.name().to_owned(),
        scopes: principal
            .scopes()
            .iter()
            .map(|scope| scope.as_str())
            .collect(),
    }
}
