//! `gateway.*`: the gateway describing itself.

use crate::auth::Principal;
use crate::error::Error;
use crate::methods::Call;
use crate::wire::{CallerInfo, NoParams, ServerInfo, StatusResult, TokensResult};

/// `gateway.status`: version, uptime, open connections and who is asking; any scope.
pub(super) async fn status(call: Call, _: NoParams) -> Result<StatusResult, Error> {
    Ok(StatusResult {
        server: ServerInfo::current(call.state.events()),
        uptime_ms: u64::try_from(call.state.uptime().as_millis()).unwrap_or(u64::MAX),
        connections: call.state.open_connections(),
        caller: caller_info(&call.caller),
        chat: call.state.chat().map(|chat| chat.status()),
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
