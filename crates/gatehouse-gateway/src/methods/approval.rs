//! `exec.approval.*`: ask a person, wait for the answer, answer, and look approvals up.
//!
//! Operators (`operator.approvals`) see every approval and may use id prefixes; an `agent` token
//! sees only the approvals it created, by full id, and learns nothing about others.

use std::str::FromStr as _;
use std::time::Duration;

use gatehouse_approvals::{
    AllowlistWrite, ApprovalError, ApprovalRecord, ApprovalRequest, ApprovalState, CreateApproval,
    IdDisclosure, ListFilter, ListOrder, run_binding,
};
use gatehouse_policy::ApprovalDecision;
use gatehouse_policy::Security;
use gatehouse_policy::binding::{Binding, BindingInput};
use gatehouse_policy::elevated::SenderIdentity;
use gatehouse_policy::exec::{ExecEvaluation, ExecPolicy, evaluate};
use gatehouse_policy::requirement::{ApprovalOutcome, resolve_approval};
use uuid::Uuid;

use crate::chat::LevelRequest;
use crate::error::Error;
use crate::exec::resolve::spawned_program;
use crate::exec::{ExecServices, has_approval_route};
use crate::methods::{Call, exec_of, requested_policy};
use crate::payloads::{effective_ask_fallback, exec_request};
use crate::scope::{Access, Scope};
use crate::wire::exec::{
    Accepted, ApprovalJson, DecisionResult, FallbackJson, IdParams, ListParams, ListResult,
    RequestAnswer, RequestParams, ResolveParams, ResolveResult, TurnSourceJson,
};

/// The most approvals one `exec.approval.list` returns.
const MAX_LIST: usize = 1_000;

// Cards tell people to type `SHORT_ID_LEN` digits, and the manager keeps that many unique
// (`SHORT_ID_DIGITS`): were cards to show fewer, a typed short id could name two approvals.
const _: () = assert!(gatehouse_chat::render::SHORT_ID_LEN == gatehouse_approvals::SHORT_ID_DIGITS);

/// The longest reason a resolver may give; it is stored, audited and sent to every operator.
const MAX_REASON_CHARS: usize = 1_000;

/// `exec.approval.request`: creates a pending approval and answers when it is decided, or at
/// once with `twoPhase`; a blocking request answers `shutting_down` once the gateway stops (see
/// [`ExecServices::create_and_await`]). `agent` scope. A chosen `id` that is taken, or whose
/// short id is, answers `id_in_use` without saying whose approval holds it.
pub(super) async fn request(call: Call, params: RequestParams) -> Result<RequestAnswer, Error> {
    let exec = exec_of(&call)?;
    if let Some(id) = &params.id {
        full_id(id, "exec.approval.request")?;
    }
    let level = LevelRequest {
        method: "exec.approval.request",
        agent_id: &params.agent_id,
        session_key: Some(&params.session_key),
        level: params.elevated,
        sender: params.sender.as_ref().map(SenderIdentity::from),
    };
    let (policy, ask_fallback, _) = requested_policy(&call, &exec, &level)?;
    let (command, argv) = match params.argv {
        Some(argv) => (None, Some(argv)),
        None => (Some(params.command.clone()), None),
    };
    // Approvers read `command`, the policy judges and allow-always persists `argv`: the two
    // must say the same, or a harmless text could front for any program.
    if let Some(argv) = &argv {
        let text = gatehouse_policy::exec::node_command_text(argv, Some(&params.command));
        if !text.valid {
            return Err(invalid(
                "exec.approval.request",
                format!(
                    "`command` must describe `argv` exactly (as {:?})",
                    text.display_command
                ),
            ));
        }
    }
    let exec_req = exec_request(command, argv.clone(), params.cwd.clone(), &params.env)
        .map_err(|reason| invalid("exec.approval.request", reason))?;
    let evaluation = evaluate(&exec_req, &policy);
    let resolved = match &argv {
        Some(argv) => argv
            .first()
            .and_then(|program| spawned_program(program, &params.cwd, &params.env, &evaluation)),
        None => evaluation
            .segments
            .first()
            .and_then(|segment| segment.resolved_path.clone()),
    };
    // Bind when the exact argv and its executable are known; a shell string binds in
    // `system.run`, which knows what it will spawn.
    let binding = match (&argv, &resolved) {
        (Some(argv), Some(executable)) => Binding::compute(&BindingInput {
            cwd: &params.cwd,
            argv,
            env: &params.env,
            agent_id: &params.agent_id,
            session_key: &params.session_key,
            resolved_executable: executable,
        })
        .ok()
        .map(|binding| run_binding(&binding)),
        _ => None,
    };
    let request = ApprovalRequest {
        command: params.command,
        argv: argv.unwrap_or_default(),
        cwd: Some(params.cwd.display().to_string()),
        env_keys: params.env.keys().cloned().collect(),
        host: params.host,
        agent_id: Some(params.agent_id),
        session_key: Some(params.session_key),
        resolved_path: resolved.map(|path| path.display().to_string()),
        security: Some(policy.security),
        ask: Some(policy.ask),
        turn_source: params.turn_source.as_ref().map(TurnSourceJson::to_store),
        binding,
        requested_by: Some(call.caller.name().to_owned()),
    };
    let create = CreateApproval {
        id: params.id,
        request,
        timeout: params.timeout_ms.map(Duration::from_millis),
        allow_always_patterns: evaluation.allow_always_patterns.clone(),
    };
    let route = has_approval_route(&call.state, &create.request);
    if params.two_phase {
        let (created, _) = exec.create(call.caller.name(), create, route).await?;
        return Ok(RequestAnswer::Accepted(Accepted {
            status: "accepted",
            id: created.id.to_string(),
            created_at_ms: created.created_at_ms,
            expires_at_ms: created.expires_at_ms,
        }));
    }
    let record = exec
        .create_and_await(call.caller.name(), create, route, &call.state)
        .await?;
    let mut result = DecisionResult::from_record(&record);
    result.fallback = fallback(&record, ask_fallback, &policy, &evaluation);
    Ok(RequestAnswer::Decided(result))
}

/// What `askFallback` makes of an approval nobody answered; `None` when a person answered.
fn fallback(
    record: &ApprovalRecord,
    ask_fallback: Security,
    policy: &ExecPolicy,
    evaluation: &ExecEvaluation,
) -> Option<FallbackJson> {
    if record.state != ApprovalState::Expired {
        return None;
    }
    let result = resolve_approval(
        ApprovalOutcome::TimedOut,
        ask_fallback,
        policy.security,
        evaluation.analysis_ok,
        evaluation.allowlist_satisfied,
    );
    // The fallback that applied: a `full` fallback under `allowlist` acts as `allowlist`, and
    // naming the configured one would tell the requester it could have run.
    Some(FallbackJson {
        ask_fallback: effective_ask_fallback(ask_fallback, policy.security).as_str(),
        approved: result.approved,
        denied_reason: result.denied_reason.map(|reason| reason.as_str()),
    })
}

/// `exec.approval.waitDecision`: waits until the approval is settled and answers its outcome;
/// answers at once when it already is. Once the gateway is shutting down a wait still open
/// answers `shutting_down` at once: a person may take longer than the shutdown grace, and the
/// approval is left pending for the next start to cancel.
pub(super) async fn wait_decision(call: Call, params: IdParams) -> Result<DecisionResult, Error> {
    let exec = exec_of(&call)?;
    let id = full_id(&params.id, "exec.approval.waitDecision")?;
    // A pending approval this run holds is checked in memory; only others need the record.
    if !is_operator(&call) && !exec.owns(call.caller.name(), id) {
        visible_record(&call, &exec, id).await?;
    }
    // Biased: a decision that is ready when polled wins over the shutdown; one that must first
    // be read from the store may lose to it, and the caller asks again after the restart.
    let record = tokio::select! {
        biased;
        record = exec.manager().await_decision(id) => record?,
        () = call.state.shutdown_signal() => return Err(Error::ShuttingDown),
    };
    Ok(DecisionResult::from_record(&record))
}

/// `exec.approval.get`: one approval by id (operators: or unique prefix).
pub(super) async fn get(call: Call, params: IdParams) -> Result<ApprovalJson, Error> {
    let exec = exec_of(&call)?;
    let record = if is_operator(&call) {
        exec.manager()
            .get(&params.id, IdDisclosure::Revealed)
            .await
            .map_err(|error| manager_error(error, "exec.approval.get"))?
    } else {
        let id = full_id(&params.id, "exec.approval.get")?;
        visible_record(&call, &exec, id).await?
    };
    Ok(ApprovalJson::new(&record, exec.offered(&record)))
}

/// `exec.approval.list`: stored approvals, oldest or newest first. `operator.approvals` scope.
pub(super) async fn list(call: Call, params: ListParams) -> Result<ListResult, Error> {
    let exec = exec_of(&call)?;
    let state = params
        .state
        .as_deref()
        .map(ApprovalState::from_str)
        .transpose()
        .map_err(|error| invalid("exec.approval.list", error.to_string()))?;
    let order = match params.order.as_deref() {
        None | Some("oldest-first") => ListOrder::OldestFirst,
        Some("newest-first") => ListOrder::NewestFirst,
        Some(other) => {
            return Err(invalid(
                "exec.approval.list",
                format!("unknown order {other:?}; expected oldest-first or newest-first"),
            ));
        }
    };
    let filter = ListFilter {
        state,
        agent_id: params.agent_id,
        limit: params.limit.unwrap_or(100).min(MAX_LIST),
        order,
    };
    let records = exec.manager().list(filter).await?;
    Ok(ListResult {
        approvals: records
            .iter()
            .map(|record| ApprovalJson::new(record, exec.offered(record)))
            .collect(),
    })
}

/// `exec.approval.resolve`: answers an approval by id or unique prefix. The first answer wins;
/// later answers within the grace period report the winner with `applied: false`.
pub(super) async fn resolve(call: Call, params: ResolveParams) -> Result<ResolveResult, Error> {
    let exec = exec_of(&call)?;
    let decision = ApprovalDecision::from_str(&params.decision).map_err(|_| {
        invalid(
            "exec.approval.resolve",
            format!(
                "unknown decision {:?}; expected allow-once, allow-always or deny",
                params.decision
            ),
        )
    })?;
    let reason = params.reason.filter(|reason| !reason.trim().is_empty());
    if let Some(reason) = &reason
        && reason.chars().count() > MAX_REASON_CHARS
    {
        return Err(invalid(
            "exec.approval.resolve",
            format!("reason is longer than {MAX_REASON_CHARS} characters"),
        ));
    }
    let resolved = exec
        .manager()
        .resolve_because(
            &params.id,
            decision,
            call.caller.name(),
            reason,
            IdDisclosure::Revealed,
        )
        .await
        .map_err(|error| manager_error(error, "exec.approval.resolve"))?;
    let (allowlist_added, allowlist_error) = match resolved.allowlist {
        AllowlistWrite::NotRequested => (Vec::new(), None),
        AllowlistWrite::Added(entries) => (
            entries
                .into_iter()
                .filter(|entry| entry.added)
                .map(|entry| entry.id)
                .collect(),
            None,
        ),
        AllowlistWrite::Failed(error) => {
            tracing::error!(error = %error, "Allow-always decided but the allowlist write failed.");
            (Vec::new(), Some(error.to_string()))
        }
    };
    let winner = resolved.outcome.winner();
    Ok(ResolveResult {
        id: winner.id.clone(),
        applied: resolved.outcome.applied(),
        state: winner.state.as_str(),
        decision: winner.decision.map(|d| d.as_str()),
        resolved_by: winner.resolved_by.clone(),
        allowlist_added,
        allowlist_error,
    })
}

fn is_operator(call: &Call) -> bool {
    call.caller.allows(Access::Scope(Scope::Approvals))
}

/// A full approval id, the only way agents may name one: a prefix would let them probe for
/// approvals that are not theirs.
fn full_id(key: &str, method: &str) -> Result<Uuid, Error> {
    Uuid::try_parse(key).map_err(|_| invalid(method, format!("{key:?} is not a full approval id")))
}

/// The stored approval `id` if the caller may see it: operators every one, an agent token those
/// it requested. This run remembers who asked while it holds an approval, and the stored record
/// says so afterwards, also after a restart. Any other id reads as unknown, so nothing leaks.
async fn visible_record(
    call: &Call,
    exec: &ExecServices,
    id: Uuid,
) -> Result<ApprovalRecord, Error> {
    let not_found = || Error::NotFound {
        reason: format!("unknown approval {id}"),
    };
    let record = match exec
        .manager()
        .get(&id.to_string(), IdDisclosure::Hidden)
        .await
    {
        Ok(record) => record,
        Err(ApprovalError::Unknown { .. }) => return Err(not_found()),
        Err(other) => return Err(other.into()),
    };
    let caller = call.caller.name();
    if is_operator(call)
        || exec.owns(caller, id)
        || record.request.requested_by.as_deref() == Some(caller)
    {
        Ok(record)
    } else {
        Err(not_found())
    }
}

/// The manager's refusal as `method`'s: an id or prefix it cannot read is a bad param.
fn manager_error(error: ApprovalError, method: &str) -> Error {
    match error {
        ApprovalError::InvalidKey { .. } | ApprovalError::InvalidId { .. } => {
            invalid(method, error.to_string())
        }
        other => other.into(),
    }
}

fn invalid(method: &str, reason: impl Into<String>) -> Error {
    Error::InvalidParams {
        method: method.to_owned(),
        reason: reason.into(),
    }
}
