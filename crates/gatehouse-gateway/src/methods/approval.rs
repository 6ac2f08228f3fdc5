//! `exec.approval.*`: ask a person, wait for the answer, answer, and look approvals up.
//!
//! Operators (`operator.approvals`) see every approval and may use id prefixes; an `agent` token
//! sees only the approvals it created, by full id, and learns nothing about others (the service
//! holds to that; these handlers read params and convert answers).

use std::str::FromStr as _;

use gatehouse_approvals::{ApprovalState, ListFilter, ListOrder};
use gatehouse_policy::ApprovalDecision;
use gatehouse_service::RequestOutcome;

use crate::error::Error;
use crate::methods::{Call, service_of};
use crate::wire::exec::{
    Accepted, ApprovalJson, DecisionResult, IdParams, ListParams, ListResult, RequestAnswer,
    RequestParams, ResolveParams, ResolveResult,
};

/// `exec.approval.request`: creates a pending approval and answers when it is decided, or at
/// once with `twoPhase`; a blocking request answers `shutting_down` once the gateway stops.
/// `agent` scope. A chosen `id` that is taken, or whose short id is, answers `id_in_use`
/// without saying whose approval holds it.
pub(super) async fn request(call: Call, params: RequestParams) -> Result<RequestAnswer, Error> {
    const METHOD: &str = "exec.approval.request";
    let service = service_of(&call)?;
    let outcome = service
        .request(call.caller.as_ref(), params.into())
        .await
        .map_err(|error| Error::service(METHOD, error))?;
    Ok(match outcome {
        RequestOutcome::Accepted(created) => RequestAnswer::Accepted(Accepted {
            status: "accepted",
            id: created.id.to_string(),
            created_at_ms: created.created_at_ms,
            expires_at_ms: created.expires_at_ms,
        }),
        RequestOutcome::Decided { record, fallback } => {
            let mut result = DecisionResult::from_record(&record);
            result.fallback = fallback.map(Into::into);
            RequestAnswer::Decided(result)
        }
    })
}

/// `exec.approval.waitDecision`: waits until the approval is settled and answers its outcome;
/// answers at once when it already is, and `shutting_down` once the gateway stops.
pub(super) async fn wait_decision(call: Call, params: IdParams) -> Result<DecisionResult, Error> {
    let service = service_of(&call)?;
    let record = service
        .wait_decision(call.caller.as_ref(), &params.id)
        .await
        .map_err(|error| Error::service("exec.approval.waitDecision", error))?;
    Ok(DecisionResult::from_record(&record))
}

/// `exec.approval.get`: one approval by id (operators: or unique prefix).
pub(super) async fn get(call: Call, params: IdParams) -> Result<ApprovalJson, Error> {
    let service = service_of(&call)?;
    let view = service
        .approval(call.caller.as_ref(), &params.id)
        .await
        .map_err(|error| Error::service("exec.approval.get", error))?;
    Ok(ApprovalJson::from(&view))
}

/// `exec.approval.list`: stored approvals, oldest or newest first. `operator.approvals` scope.
pub(super) async fn list(call: Call, params: ListParams) -> Result<ListResult, Error> {
    const METHOD: &str = "exec.approval.list";
    let service = service_of(&call)?;
    let state = params
        .state
        .as_deref()
        .map(ApprovalState::from_str)
        .transpose()
        .map_err(|error| invalid(METHOD, error.to_string()))?;
    let order = match params.order.as_deref() {
        None | Some("oldest-first") => ListOrder::OldestFirst,
        Some("newest-first") => ListOrder::NewestFirst,
        Some(other) => {
            return Err(invalid(
                METHOD,
                format!("unknown order {other:?}; expected oldest-first or newest-first"),
            ));
        }
    };
    let filter = ListFilter {
        state,
        agent_id: params.agent_id,
        limit: params.limit.unwrap_or(100),
        order,
    };
    let views = service
        .list(filter)
        .await
        .map_err(|error| Error::service(METHOD, error))?;
    Ok(ListResult {
        approvals: views.iter().map(ApprovalJson::from).collect(),
    })
}

/// `exec.approval.resolve`: answers an approval by id or unique prefix. The first answer wins;
/// later answers within the grace period report the winner with `applied: false`.
pub(super) async fn resolve(call: Call, params: ResolveParams) -> Result<ResolveResult, Error> {
    const METHOD: &str = "exec.approval.resolve";
    let service = service_of(&call)?;
    let decision = ApprovalDecision::from_str(&params.decision).map_err(|_| {
        invalid(
            METHOD,
            format!(
                "unknown decision {:?}; expected allow-once, allow-always or deny",
                params.decision
            ),
        )
    })?;
    let decided = service
        .resolve(call.caller.as_ref(), &params.id, decision, params.reason)
        .await
        .map_err(|error| Error::service(METHOD, error))?;
    Ok(ResolveResult::from(&decided))
}

fn invalid(method: &str, reason: impl Into<String>) -> Error {
    Error::InvalidParams {
        method: method.to_owned(),
        reason: reason.into(),
    }
}
