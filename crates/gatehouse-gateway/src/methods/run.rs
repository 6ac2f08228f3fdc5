//! `system.run`: policy, then a person when the policy asks, then execution on the gateway host
//! of exactly the approved argv (the service's `run`; see there).

use crate::error::Error;
use crate::methods::{Call, service_of};
use crate::wire::exec::{RunParams, RunResult};

/// `system.run`. `agent` scope.
pub(super) async fn run(call: Call, params: RunParams) -> Result<RunResult, Error> {
    let service = service_of(&call)?;
    let outcome = service
        .run(call.caller.as_ref(), params.into())
        .await
        .map_err(|error| Error::service("system.run", error))?;
    Ok(RunResult::from(outcome))
}
