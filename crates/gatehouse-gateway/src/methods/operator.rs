//! What operators read in the Control UI beyond pending approvals: `exec.approval.history`
//! (`operator.approvals`), `exec.policy.effective` (`operator.approvals`), and `audit.verify` and
//! `audit.tail` (`operator.admin`: the log holds every request's details, for the gateway's owner).

use std::str::FromStr as _;

use gatehouse_service::{MAX_AUDIT_TAIL, Outcome};

use crate::error::Error;
use crate::methods::{Call, service_of};
use crate::wire::NoParams;
use crate::wire::operator::{
    AgentPolicyJson, AgentPolicyParams, AuditTailParams, AuditTailResult, AuditVerifyResult,
    HistoryParams, HistoryResult,
};

/// `exec.approval.history`: settled approvals matching the filters, newest first, one page.
pub(super) async fn history(call: Call, params: HistoryParams) -> Result<HistoryResult, Error> {
    const METHOD: &str = "exec.approval.history";
    let service = service_of(&call)?;
    let outcome = params
        .outcome
        .as_deref()
        .filter(|outcome| !outcome.is_empty())
        .map(Outcome::from_str)
        .transpose()
        .map_err(|error| Error::service(METHOD, error))?;
    let offset = params.offset;
    let page = service
        .history(params.into_query(outcome))
        .await
        .map_err(|error| Error::service(METHOD, error))?;
    Ok(HistoryResult::new(&page, offset))
}

/// `exec.policy.effective`: what one agent's commands are judged under now.
pub(super) async fn agent_policy(
    call: Call,
    params: AgentPolicyParams,
) -> Result<AgentPolicyJson, Error> {
    let service = service_of(&call)?;
    let view = service
        .agent_policy(&params.agent_id)
        .map_err(|error| Error::service("exec.policy.effective", error))?;
    Ok(view.into())
}

/// `audit.verify`: the hash chain's verdict, as `gatehouse audit verify --json` gives it.
pub(super) async fn audit_verify(call: Call, _: NoParams) -> Result<AuditVerifyResult, Error> {
    let service = service_of(&call)?;
    let verdict = service
        .audit_verify()
        .await
        .map_err(|error| Error::service("audit.verify", error))?;
    Ok(verdict.into())
}

/// `audit.tail`: the last records of the active log file, oldest first, unchecked.
pub(super) async fn audit_tail(
    call: Call,
    params: AuditTailParams,
) -> Result<AuditTailResult, Error> {
    let service = service_of(&call)?;
    let entries = service
        .audit_tail(params.limit.unwrap_or(50).min(MAX_AUDIT_TAIL))
        .await
        .map_err(|error| Error::service("audit.tail", error))?;
    Ok(AuditTailResult {
        records: entries.into_iter().map(Into::into).collect(),
    })
}
