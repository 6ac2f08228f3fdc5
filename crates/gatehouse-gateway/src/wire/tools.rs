//! Params and results of `tools.call.*` and `tools.grants.*`, and the tool part of an approval
//! as every approval payload carries it.
//!
//! Converted by hand from the service's types, as `exec.rs` does; the decision itself is the
//! service's `ToolDecisionJson`, the one serializer `gatehouse check --tool --json` prints too.

use std::time::Duration;

use gatehouse_approvals::{Severity, StoredGrant, ToolRequest};
use gatehouse_policy::ApprovalDecision;
use gatehouse_service::policy::report::{GrantJson, ToolDecisionJson};
use gatehouse_service::policy::tool_call::{Conversation, ToolSession};
use gatehouse_service::{ToolCallInput, ToolFinished, ToolFinishedInput, ToolRequestInput};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::exec::{Accepted, DecisionResult, TurnSourceJson};

/// Declares the params of a tool-call method: the call (`agentId`, `sessionKey`, `tool`,
/// `params`, `callId`, and who is calling as the tool policy sees it) is spelt the same in
/// both, so it is written once; `tools.call.request` adds what approvers are told.
macro_rules! tool_call_params {
    (
        $(#[$meta:meta])*
        $name:ident { $($(#[$extra_meta:meta])* $extra:ident: $extra_ty:ty,)* }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields, rename_all = "camelCase")]
        pub(crate) struct $name {
            pub(crate) agent_id: String,
            pub(crate) session_key: String,
            pub(crate) tool: String,
            #[serde(default)]
            pub(crate) params: Value,
            pub(crate) call_id: Option<String>,
            /// The sender owns the deployment (owner-only tools); `false` unless said.
            #[serde(default)]
            pub(crate) owner: bool,
            pub(crate) provider: Option<String>,
            pub(crate) model: Option<String>,
            #[serde(default)]
            pub(crate) spawn_depth: u32,
            /// The conversation whose `channels.*` tool policy applies.
            pub(crate) group: Option<GroupJson>,
            $($(#[$extra_meta])* pub(crate) $extra: $extra_ty,)*
        }

        impl $name {
            /// The call as the service takes it; `fallback_group` is the conversation when
            /// `group` names none.
            fn call(&mut self, fallback_group: Option<Conversation>) -> ToolCallInput {
                ToolCallInput {
                    agent_id: std::mem::take(&mut self.agent_id),
                    session_key: std::mem::take(&mut self.session_key),
                    tool: std::mem::take(&mut self.tool),
                    params: self.params.take(),
                    call_id: self.call_id.take(),
                    session: ToolSession {
                        owner: self.owner,
                        provider: self.provider.take(),
                        model: self.model.take(),
                        sandboxed: false,
                        spawn_depth: self.spawn_depth,
                        conversation: self
                            .group
                            .take()
                            .map(|g| Conversation { channel: g.channel, id: g.id })
                            .or(fallback_group),
                    },
                }
            }
        }
    };
}

/// `group`: a chat conversation as its platform names it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GroupJson {
    channel: String,
    id: String,
}

tool_call_params! {
    /// `tools.call.check` params.
    CheckParams {}
}

tool_call_params! {
    /// `tools.call.request` params.
    RequestParams {
        id: Option<String>,
        title: Option<String>,
        description: Option<String>,
        severity: Option<String>,
        timeout_ms: Option<u64>,
        allowed_decisions: Option<Vec<String>>,
        #[serde(default)]
        two_phase: bool,
        turn_source: Option<TurnSourceJson>,
    }
}

impl From<CheckParams> for ToolCallInput {
    fn from(mut params: CheckParams) -> Self {
        params.call(None)
    }
}

impl RequestParams {
    /// The request as the service takes it; `Err` names the param that is not understood.
    pub(crate) fn into_input(mut self) -> Result<ToolRequestInput, String> {
        let severity = match self.severity.as_deref() {
            None => Severity::Info,
            Some(text) => text.parse().map_err(|e| format!("{e}"))?,
        };
        let allow_always = match &self.allowed_decisions {
            None => true,
            Some(names) => allowed(names)?,
        };
        let turn_source = self.turn_source.as_ref().map(TurnSourceJson::to_store);
        // Without a `group`, the chat the turn came from is the conversation.
        let origin = turn_source.as_ref().and_then(|source| {
            Some(Conversation {
                channel: source.channel.clone()?,
                id: source.to.clone()?,
            })
        });
        Ok(ToolRequestInput {
            call: self.call(origin),
            id: self.id,
            title: self.title,
            description: self.description,
            severity,
            timeout: self.timeout_ms.map(Duration::from_millis),
            allow_always,
            two_phase: self.two_phase,
            turn_source,
        })
    }
}

/// Whether allow-always may be offered: `allowedDecisions` must name allow-once and deny (a
/// person can always refuse, and say yes once), and may leave out allow-always.
fn allowed(names: &[String]) -> Result<bool, String> {
    let mut decisions = Vec::new();
    for name in names {
        let decision: ApprovalDecision = name.parse().map_err(|_| {
            format!(
                "unknown decision {name:?} in allowedDecisions (allow-once, allow-always, deny)"
            )
        })?;
        decisions.push(decision);
    }
    if !decisions.contains(&ApprovalDecision::AllowOnce)
        || !decisions.contains(&ApprovalDecision::Deny)
    {
        return Err(
            "allowedDecisions must include allow-once and deny; only allow-always may be left out"
                .to_owned(),
        );
    }
    Ok(decisions.contains(&ApprovalDecision::AllowAlways))
}

/// `tools.call.finished` params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct FinishedParams {
    call_id: String,
    ok: bool,
    duration_ms: u64,
    error: Option<String>,
}

impl From<FinishedParams> for ToolFinishedInput {
    fn from(params: FinishedParams) -> Self {
        ToolFinishedInput {
            call_id: params.call_id,
            ok: params.ok,
            duration_ms: params.duration_ms,
            error: params.error,
        }
    }
}

/// `tools.call.finished` result.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FinishedResult {
    recorded: bool,
    matched: bool,
    decision: Option<&'static str>,
    approval_id: Option<String>,
}

impl From<ToolFinished> for FinishedResult {
    fn from(finished: ToolFinished) -> Self {
        FinishedResult {
            recorded: true,
            matched: finished.matched,
            decision: finished.decision,
            approval_id: finished.approval_id,
        }
    }
}

/// `tools.call.request` answer.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum RequestAnswer {
    /// Two-phase: `{status:"accepted", id, createdAtMs, expiresAtMs, check}`.
    Accepted(Box<AcceptedResult>),
    /// Refused by policy, or decided by a person (or nobody in time).
    Decided(Box<RequestResult>),
}

/// A two-phase request's acknowledgement, with the decision the person is asked about.
#[derive(Debug, Serialize)]
pub(crate) struct AcceptedResult {
    #[serde(flatten)]
    pub(crate) accepted: Accepted,
    pub(crate) check: ToolDecisionJson,
}

/// The outcome of a tool request: `decision` is what the caller may do (`allow` only when a
/// person allowed it), `approval` how the approval ended (`null` when the policy refused the
/// call and nobody was asked), `grant` what an allow-always stored.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RequestResult {
    pub(crate) decision: &'static str,
    pub(crate) approval: Option<DecisionResult>,
    pub(crate) grant: Option<GrantRecordJson>,
    pub(crate) check: ToolDecisionJson,
}

/// `tools.grants.list` params.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ListGrantsParams {
    pub(crate) agent_id: Option<String>,
}

/// `tools.grants.revoke` params: the grant's id or a unique prefix of it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RevokeParams {
    pub(crate) id: String,
}

/// `tools.grants.list` result.
#[derive(Debug, Serialize)]
pub(crate) struct GrantsResult {
    pub(crate) grants: Vec<GrantRecordJson>,
}

/// `tools.grants.revoke` result.
#[derive(Debug, Serialize)]
pub(crate) struct RevokeResult {
    pub(crate) revoked: GrantRecordJson,
}

/// One stored grant: `{id, agentId, tool, scope, values, createdAtMs, grantedBy}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GrantRecordJson {
    id: String,
    agent_id: String,
    #[serde(flatten)]
    grant: GrantJson,
    created_at_ms: u64,
    granted_by: Option<String>,
}

impl From<&StoredGrant> for GrantRecordJson {
    fn from(stored: &StoredGrant) -> Self {
        GrantRecordJson {
            id: stored.id.clone(),
            agent_id: stored.agent_id.clone(),
            grant: GrantJson::from(&stored.grant),
            created_at_ms: stored.created_at_ms,
            granted_by: stored.granted_by.clone(),
        }
    }
}

/// The tool part of an approval (`request.tool`; `null` for exec approvals): what approvers
/// are told about the call. Parameter values are the agent host's text, to be shown visibly.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolRequestJson {
    name: String,
    call_id: Option<String>,
    params: Vec<ParamJson>,
    title: Option<String>,
    description: Option<String>,
    severity: &'static str,
    reasons: Vec<String>,
    grant: Option<GrantJson>,
}

#[derive(Debug, Serialize)]
struct ParamJson {
    name: String,
    value: String,
}

impl From<&ToolRequest> for ToolRequestJson {
    fn from(tool: &ToolRequest) -> Self {
        ToolRequestJson {
            name: tool.tool.clone(),
            call_id: tool.call_id.clone(),
            params: tool
                .params
                .iter()
                .map(|(name, value)| ParamJson {
                    name: name.clone(),
                    value: value.clone(),
                })
                .collect(),
            title: tool.title.clone(),
            description: tool.description.clone(),
            severity: tool.severity.as_str(),
            reasons: tool.reasons.clone(),
            grant: tool.grant.as_ref().map(GrantJson::from),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_decisions_may_leave_out_allow_always_only() {
        let names = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            allowed(&names(&["allow-once", "allow-always", "deny"])),
            Ok(true)
        );
        assert_eq!(allowed(&names(&["deny", "allow-once"])), Ok(false));
        assert!(allowed(&names(&["allow-always", "deny"])).is_err());
        assert!(allowed(&names(&["allow-once"])).is_err());
        assert!(
            allowed(&names(&["allow-once", "deny", "maybe"]))
                .unwrap_err()
                .contains("maybe")
        );
    }
}
