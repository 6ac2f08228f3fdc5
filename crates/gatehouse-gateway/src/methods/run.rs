//! `system.run`: policy, then a person when the policy asks, then execution on the gateway host
//! of exactly the approved argv.
//!
//! A shell is used only when the request was a shell string (it then runs as `/bin/sh -c`, and
//! that argv is what the approval binds). The binding is recomputed right before spawning, so a
//! script edited while the approval was pending is refused with `binding-mismatch`. Every run
//! has one id, the approval id when a person was asked, carried by all of its events.

use std::path::PathBuf;
use std::time::Duration;

use gatehouse_approvals::{
    ApprovalRecord, ApprovalRequest, ApprovalState, CreateApproval, REASON_NO_ROUTE, binding_of,
    run_binding,
};
use gatehouse_policy::binding::{Binding, BindingInput};
use gatehouse_policy::elevated::SenderIdentity;
use gatehouse_policy::exec::{Decision, ExecCommand, display_argv, evaluate};
use gatehouse_policy::requirement::{ApprovalOutcome, DeniedReason, resolve_approval};
use gatehouse_policy::{ApprovalDecision, Security};
use gatehouse_store::audit::AuditKind;
use serde_json::json;
use uuid::Uuid;

use crate::chat::{LevelRequest, level_audit};
use crate::error::Error;
use crate::exec::resolve::{spawned_program, unjudged_wrapper};
use crate::exec::runner::{self, Finished, Spawn};
use crate::exec::{ExecServices, has_approval_route};
use crate::methods::{Call, exec_of, requested_policy};
use crate::payloads::exec_request;
use crate::scope::{Access, Scope};
use crate::wire::exec::{RunParams, RunResult};

/// The shell a shell-string command runs under.
const SHELL: &str = "/bin/sh";

/// Why a run did not happen, as `exec.denied` and the result name it.
#[derive(Debug, Clone, Copy)]
enum Denial {
    UserDenied,
    ApprovalTimeout,
    NoApprovalRoute,
    BindingMismatch,
    Policy,
}

impl Denial {
    fn as_str(self) -> &'static str {
        match self {
            Self::UserDenied => "user-denied",
            Self::ApprovalTimeout => "approval-timeout",
            Self::NoApprovalRoute => "no-approval-route",
            Self::BindingMismatch => "binding-mismatch",
            Self::Policy => "policy",
        }
    }
}

/// What will be spawned, fixed before anyone is asked.
struct Plan {
    argv: Vec<String>,
    executable: PathBuf,
}

/// `system.run`. `agent` scope.
pub(super) async fn run(call: Call, params: RunParams) -> Result<RunResult, Error> {
    let exec = exec_of(&call)?;
    let level = LevelRequest {
        method: "system.run",
        agent_id: &params.agent_id,
        session_key: Some(&params.session_key),
        level: params.elevated,
        sender: params.sender.as_ref().map(SenderIdentity::from),
    };
    let (policy, ask_fallback, elevated) = requested_policy(&call, &exec, &level)?;
    let request = exec_request(
        params.command.clone(),
        params.argv.clone(),
        params.cwd.clone(),
        &params.env,
    )
    .map_err(|reason| Error::InvalidParams {
        method: "system.run".into(),
        reason,
    })?;
    let evaluation = evaluate(&request, &policy);
    exec.audit(
        AuditKind::Request,
        None,
        None,
        json!({"method": "system.run", "token": call.caller.name(), "agentId": params.agent_id,
               "sessionKey": params.session_key, "command": params.command, "argv": params.argv,
               "cwd": params.cwd, "envKeys": params.env.keys().collect::<Vec<_>>(),
               "elevated": level_audit(elevated),
               "policy": {"decision": evaluation.decision.as_str(), "reason": evaluation.reason.to_string()}}),
    );
    let plan = match &request.command {
        ExecCommand::Shell(text) => Some(Plan {
            argv: vec!["sh".to_owned(), "-c".to_owned(), text.clone()],
            executable: PathBuf::from(SHELL),
        }),
        ExecCommand::Argv(argv) => argv
            .first()
            .and_then(|program| spawned_program(program, &params.cwd, &params.env, &evaluation))
            .map(|executable| Plan {
                argv: argv.clone(),
                executable,
            }),
    };
    let Some(plan) = plan else {
        // A program the policy denies keeps the policy's reason, resolvable or not.
        let reason = match evaluation.decision {
            Decision::Deny => evaluation.reason.to_string(),
            Decision::Allow | Decision::Ask => "the executable could not be resolved".into(),
        };
        return Ok(denied(&call, Uuid::new_v4(), Denial::Policy, reason));
    };
    // Under `full` nothing was judged, so there is nothing to look through; a denial keeps
    // the policy's own reason. A shell string runs under the gateway's own shell, so only an
    // argv's program is checked as the file spawned.
    let judged = policy.security == Security::Allowlist && evaluation.decision != Decision::Deny;
    let spawned =
        matches!(request.command, ExecCommand::Argv(_)).then_some(plan.executable.as_path());
    if let Some(reason) = judged
        .then(|| unjudged_wrapper(spawned, &evaluation, &policy.safe_bin_trusted_dirs))
        .flatten()
    {
        return Ok(denied(&call, Uuid::new_v4(), Denial::Policy, reason));
    }
    let input = BindingInput {
        cwd: &params.cwd,
        argv: &plan.argv,
        env: &params.env,
        agent_id: &params.agent_id,
        session_key: &params.session_key,
        resolved_executable: &plan.executable,
    };
    let run_id = match evaluation.decision {
        Decision::Deny => {
            return Ok(denied(
                &call,
                Uuid::new_v4(),
                Denial::Policy,
                evaluation.reason.to_string(),
            ));
        }
        Decision::Allow => {
            exec.record_allowlist_uses(
                &params.agent_id,
                &command_text(&params, &plan),
                &evaluation,
            );
            Uuid::new_v4()
        }
        Decision::Ask => {
            // An approval-backed run must bind exactly what it runs; refuse when it cannot.
            let binding = match Binding::compute(&input) {
                Ok(binding) => binding,
                Err(error) => {
                    return Ok(denied(
                        &call,
                        Uuid::new_v4(),
                        Denial::Policy,
                        error.to_string(),
                    ));
                }
            };
            let summary = evaluation_summary(&evaluation, &policy);
            let record = ask(&call, &exec, &params, &plan, &summary, binding).await?;
            let id = parse_id(&record.id)?;
            let outcome = match (record.state, record.decision) {
                (ApprovalState::Allowed | ApprovalState::Denied, Some(decision)) => {
                    ApprovalOutcome::Decided(decision)
                }
                _ => ApprovalOutcome::TimedOut,
            };
            let verdict = resolve_approval(
                outcome,
                ask_fallback,
                policy.security,
                evaluation.analysis_ok,
                evaluation.allowlist_satisfied,
            );
            if let Some(reason) = verdict.denied_reason {
                let denial = match reason {
                    DeniedReason::UserDenied => Denial::UserDenied,
                    _ if record.reason.as_deref() == Some(REASON_NO_ROUTE) => {
                        Denial::NoApprovalRoute
                    }
                    _ => Denial::ApprovalTimeout,
                };
                return Ok(denied(&call, id, denial, reason.as_str().to_owned()));
            }
            if record.state == ApprovalState::Cancelled {
                let detail = record.reason.clone().unwrap_or_default();
                return Ok(denied(&call, id, Denial::ApprovalTimeout, detail));
            }
            if record.decision == Some(ApprovalDecision::AllowOnce) {
                exec.manager().consume_allow_once(id).await?;
            }
            // Right before spawning: the approved binding against what is on disk now.
            let approved = record
                .request
                .binding
                .as_ref()
                .map(binding_of)
                .transpose()
                .map_err(|error| Error::Internal {
                    reason: error.to_string(),
                })?;
            if let Some(approved) = approved
                && let Err(mismatch) = approved.verify(&input)
            {
                return Ok(denied(
                    &call,
                    id,
                    Denial::BindingMismatch,
                    mismatch.to_string(),
                ));
            }
            id
        }
    };
    execute(&call, &exec, &params, &plan, run_id).await
}

/// What approvers see besides the command: the resolved path, the settings that asked, and
/// the allow-always patterns.
fn evaluation_summary(
    evaluation: &gatehouse_policy::exec::ExecEvaluation,
    policy: &gatehouse_policy::exec::ExecPolicy,
) -> Summary {
    Summary {
        security: policy.security,
        ask: policy.ask,
        resolved_path: evaluation
            .segments
            .first()
            .and_then(|segment| segment.resolved_path.as_ref())
            .map(|path| path.display().to_string()),
        allow_always_patterns: evaluation.allow_always_patterns.clone(),
    }
}

struct Summary {
    security: gatehouse_policy::Security,
    ask: gatehouse_policy::Ask,
    resolved_path: Option<String>,
    allow_always_patterns: Vec<String>,
}

/// The command as people read it (approvers, `lastUsedCommand`): the shell string, or the argv
/// in its quoted display form, whose word boundaries survive (`["ls", "a b"]` is not `ls a b`).
fn command_text(params: &RunParams, plan: &Plan) -> String {
    params
        .command
        .clone()
        .unwrap_or_else(|| display_argv(&plan.argv))
}

/// Creates the approval and waits for its outcome; `shutting_down` once the gateway stops, so
/// the run answers that error and never starts (see [`ExecServices::create_and_await`]).
async fn ask(
    call: &Call,
    exec: &ExecServices,
    params: &RunParams,
    plan: &Plan,
    summary: &Summary,
    binding: Binding,
) -> Result<ApprovalRecord, Error> {
    let request = ApprovalRequest {
        command: command_text(params, plan),
        argv: plan.argv.clone(),
        cwd: Some(params.cwd.display().to_string()),
        env_keys: params.env.keys().cloned().collect(),
        host: None,
        agent_id: Some(params.agent_id.clone()),
        session_key: Some(params.session_key.clone()),
        resolved_path: summary.resolved_path.clone(),
        security: Some(summary.security),
        ask: Some(summary.ask),
        turn_source: params.turn_source.as_ref().map(|source| source.to_store()),
        binding: Some(run_binding(&binding)),
        requested_by: Some(call.caller.name().to_owned()),
    };
    let create = CreateApproval {
        id: params.id.clone(),
        request,
        timeout: params.approval_timeout_ms.map(Duration::from_millis),
        allow_always_patterns: summary.allow_always_patterns.clone(),
    };
    let route = has_approval_route(&call.state, &create.request);
    exec.create_and_await(call.caller.name(), create, route, &call.state)
        .await
}

/// Spawns the planned argv, announcing `exec.running` if it outlasts the threshold and
/// `exec.finished` when it ends.
async fn execute(
    call: &Call,
    exec: &ExecServices,
    params: &RunParams,
    plan: &Plan,
    run_id: Uuid,
) -> Result<RunResult, Error> {
    let limits = exec.limits();
    let timeout = params
        .timeout_ms
        .map_or(limits.run_timeout, Duration::from_millis)
        .min(limits.max_run_timeout);
    exec.audit(
        AuditKind::Execution,
        None,
        Some(&run_id.to_string()),
        json!({"status": "started", "token": call.caller.name(), "agentId": params.agent_id,
               "argv": plan.argv, "cwd": params.cwd, "executable": plan.executable}),
    );
    // Spawned at the real paths the binding was just checked against, not through a symlink
    // that could be swapped in between.
    let started = std::fs::canonicalize(&params.cwd).and_then(|cwd| {
        runner::start(&Spawn {
            executable: &std::fs::canonicalize(&plan.executable)?,
            argv: &plan.argv,
            cwd: &cwd,
            env: &params.env,
            timeout,
            max_output_bytes: limits.max_output_bytes,
        })
    });
    let running = match started {
        Ok(running) => running,
        Err(error) => {
            return Ok(denied(
                call,
                run_id,
                Denial::Policy,
                format!("cannot start {}: {error}", plan.executable.display()),
            ));
        }
    };
    let announce = {
        let hub = call.state.events().clone();
        let after = limits.running_event_after;
        let payload = json!({
            "runId": run_id.to_string(),
            "agentId": params.agent_id,
            "argv": plan.argv,
            "cwd": params.cwd.display().to_string(),
        });
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            hub.publish("exec.running", &payload, Access::Scope(Scope::Approvals));
        })
    };
    let finished = running.finish().await;
    announce.abort();
    let finished = finished.map_err(|error| Error::Internal {
        reason: format!("run {run_id}: {error}"),
    })?;
    publish_finished(call, run_id, &finished);
    Ok(RunResult {
        run_id: run_id.to_string(),
        status: "finished",
        reason: None,
        detail: None,
        exit_code: finished.exit_code,
        signal: finished.signal,
        timed_out: finished.timed_out,
        duration_ms: millis(finished.duration),
        stdout: String::from_utf8_lossy(&finished.stdout.bytes).into_owned(),
        stderr: String::from_utf8_lossy(&finished.stderr.bytes).into_owned(),
        stdout_truncated: finished.stdout.truncated,
        stderr_truncated: finished.stderr.truncated,
    })
}

fn publish_finished(call: &Call, run_id: Uuid, finished: &Finished) {
    let payload = json!({
        "runId": run_id.to_string(),
        "exitCode": finished.exit_code,
        "signal": finished.signal,
        "timedOut": finished.timed_out,
        "durationMs": millis(finished.duration),
        "stdoutTruncated": finished.stdout.truncated,
        "stderrTruncated": finished.stderr.truncated,
    });
    audit(call, run_id, "finished", &payload);
    call.state
        .events()
        .publish("exec.finished", &payload, Access::Scope(Scope::Approvals));
}

/// An execution record; approval-backed runs also carry their approval id.
fn audit(call: &Call, run_id: Uuid, status: &str, payload: &serde_json::Value) {
    if let Some(exec) = call.state.exec() {
        let run = run_id.to_string();
        exec.audit(
            AuditKind::Execution,
            exec.owns_any(run_id).then_some(run.as_str()),
            Some(&run),
            json!({"status": status, "event": payload}),
        );
    }
}

/// Announces `exec.denied` and builds the answer.
fn denied(call: &Call, run_id: Uuid, denial: Denial, detail: String) -> RunResult {
    let payload = json!({
        "runId": run_id.to_string(),
        "reason": denial.as_str(),
        "detail": detail,
    });
    audit(call, run_id, "denied", &payload);
    call.state
        .events()
        .publish("exec.denied", &payload, Access::Scope(Scope::Approvals));
    RunResult {
        run_id: run_id.to_string(),
        status: "denied",
        reason: Some(denial.as_str()),
        detail: Some(detail),
        exit_code: None,
        signal: None,
        timed_out: false,
        duration_ms: 0,
        stdout: String::new(),
        stderr: String::new(),
        stdout_truncated: false,
        stderr_truncated: false,
    }
}

fn parse_id(id: &str) -> Result<Uuid, Error> {
    Uuid::try_parse(id).map_err(|_| Error::Internal {
        reason: format!("stored approval id {id:?} is not a uuid"),
    })
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
