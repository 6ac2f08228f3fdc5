//! `system.run`: policy, then a person when the policy asks, then execution on this host of
//! exactly the approved argv.
//!
//! A shell is used only when the request was a shell string (it then runs as `/bin/sh -c`, and
//! that argv is what the approval binds). The binding is recomputed right before spawning, so a
//! script edited while the approval was pending is refused with `binding-mismatch`. Every run
//! has one id, the approval id when a person was asked, carried by all of its events.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use gatehouse_approvals::{
    ApprovalState, CreateApproval, REASON_NO_ROUTE, TurnSource, binding_of, run_binding,
};
use gatehouse_policy::binding::{Binding, BindingInput};
use gatehouse_policy::exec::{Decision, ExecCommand, display_argv};
use gatehouse_policy::requirement::DeniedReason;
use gatehouse_policy::{ApprovalDecision, Security};
use gatehouse_store::audit::AuditKind;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::exec::resolve::{spawned_program, unjudged_wrapper};
use crate::exec::runner::{self, Finished, Spawn};
use crate::pipeline::{Asked, ExecContext, Judged, RUN, invalid};
use crate::policy::elevated::level_audit;
use crate::policy::request::exec_request;
use crate::publish::{Denial, RunEvent};
use crate::service::Service;

/// The shell a shell-string command runs under.
const SHELL: &str = "/bin/sh";

/// A command to run: exactly one of `command` (a shell string) and `argv`.
#[derive(Debug, Clone, Default)]
pub struct RunInput {
    /// The approval's id, if a person must be asked, so the requester can name the approval
    /// while it waits.
    pub id: Option<String>,
    /// A shell string.
    pub command: Option<String>,
    /// An exact argv.
    pub argv: Option<Vec<String>>,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Environment overrides.
    pub env: BTreeMap<String, String>,
    /// How long the run may take, up to `ExecLimits::max_run_timeout`.
    pub timeout: Option<Duration>,
    /// How long a person has, instead of the default.
    pub approval_timeout: Option<Duration>,
    /// Where the agent's turn came from, so a prompt can go back there.
    pub turn_source: Option<TurnSource>,
    /// Whose settings apply.
    pub context: ExecContext,
}

/// How a run ended.
#[derive(Debug)]
pub enum RunOutcome {
    /// It ran.
    Finished {
        /// The run's id.
        run_id: Uuid,
        /// How it ended.
        finished: Finished,
    },
    /// It did not run.
    Denied {
        /// The run's id.
        run_id: Uuid,
        /// Why, as a stable word.
        denial: Denial,
        /// Why, for people.
        detail: String,
    },
}

/// What will be spawned, fixed before anyone is asked.
struct Plan {
    argv: Vec<String>,
    executable: PathBuf,
}

impl Service {
    /// `system.run`: judges, asks a person when the policy says so (answering
    /// [`ServiceError::ShuttingDown`] if the service stops meanwhile, so the run never starts),
    /// re-checks the binding and runs.
    pub async fn run(
        &self,
        caller: &dyn Caller,
        input: RunInput,
    ) -> Result<RunOutcome, ServiceError> {
        let (request, judged) = self.judge(caller, RUN, &input.context, || {
            exec_request(
                input.command.clone(),
                input.argv.clone(),
                input.cwd.clone(),
                &input.env,
            )
            .map_err(invalid)
        })?;
        let (policy, evaluation) = (&judged.policy, &judged.evaluation);
        self.core().audit(
            AuditKind::Request,
            None,
            None,
            json!({"method": RUN, "token": caller.name(), "agentId": input.context.agent_id,
                   "sessionKey": input.context.session_key, "command": input.command, "argv": input.argv,
                   "cwd": input.cwd, "envKeys": input.env.keys().collect::<Vec<_>>(),
                   "elevated": level_audit(judged.level),
                   "policy": {"decision": evaluation.decision.as_str(), "reason": evaluation.reason.to_string()}}),
        );
        let plan = match &request.command {
            ExecCommand::Shell(text) => Some(Plan {
                argv: vec!["sh".to_owned(), "-c".to_owned(), text.clone()],
                executable: PathBuf::from(SHELL),
            }),
            ExecCommand::Argv(argv) => argv
                .first()
                .and_then(|program| spawned_program(program, &input.cwd, &input.env, evaluation))
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
            return Ok(self.denied(Uuid::new_v4(), Denial::Policy, reason));
        };
        // Under `full` nothing was judged, so there is nothing to look through; a denial keeps
        // the policy's own reason. A shell string runs under the service's own shell, so only
        // an argv's program is checked as the file spawned.
        let judged_wrappers =
            policy.security == Security::Allowlist && evaluation.decision != Decision::Deny;
        let spawned =
            matches!(request.command, ExecCommand::Argv(_)).then_some(plan.executable.as_path());
        if let Some(reason) = judged_wrappers
            .then(|| unjudged_wrapper(spawned, evaluation, &policy.safe_bin_trusted_dirs))
            .flatten()
        {
            return Ok(self.denied(Uuid::new_v4(), Denial::Policy, reason));
        }
        let session_key = input.context.session_key.as_deref().unwrap_or_default();
        let bound = BindingInput {
            cwd: &input.cwd,
            argv: &plan.argv,
            env: &input.env,
            agent_id: &input.context.agent_id,
            session_key,
            resolved_executable: &plan.executable,
        };
        let run_id = match evaluation.decision {
            Decision::Deny => {
                return Ok(self.denied(
                    Uuid::new_v4(),
                    Denial::Policy,
                    evaluation.reason.to_string(),
                ));
            }
            Decision::Allow => {
                self.core().record_allowlist_uses(
                    &input.context.agent_id,
                    &command_text(&input, &plan),
                    evaluation,
                );
                Uuid::new_v4()
            }
            Decision::Ask => {
                // An approval-backed run must bind exactly what it runs; refuse when it cannot.
                let binding = match Binding::compute(&bound) {
                    Ok(binding) => binding,
                    Err(error) => {
                        return Ok(self.denied(Uuid::new_v4(), Denial::Policy, error.to_string()));
                    }
                };
                match self
                    .ask_to_run(caller, &input, &plan, &judged, binding, &bound)
                    .await?
                {
                    Ok(id) => id,
                    Err(denied) => return Ok(denied),
                }
            }
        };
        self.execute(caller, &input, &plan, run_id).await
    }

    /// Asks a person, then decides from the answer: the approval's id to run under, or the
    /// denial (already announced). A run allowed once takes its single use here, and the
    /// approved binding is checked against the disk right before spawning.
    async fn ask_to_run(
        &self,
        caller: &dyn Caller,
        input: &RunInput,
        plan: &Plan,
        judged: &Judged,
        binding: Binding,
        bound: &BindingInput<'_>,
    ) -> Result<Result<Uuid, RunOutcome>, ServiceError> {
        let evaluation = &judged.evaluation;
        let asked = Asked {
            command: command_text(input, plan),
            argv: plan.argv.clone(),
            cwd: &input.cwd,
            env: &input.env,
            host: None,
            resolved_path: evaluation
                .segments
                .first()
                .and_then(|segment| segment.resolved_path.clone()),
            turn_source: input.turn_source.clone(),
            binding: Some(run_binding(&binding)),
        };
        let create = CreateApproval {
            id: input.id.clone(),
            request: Service::approval_request(caller, &input.context, judged, asked),
            timeout: input.approval_timeout,
            allow_always_patterns: evaluation.allow_always_patterns.clone(),
        };
        let record = self.create_and_await(caller.name(), create).await?;
        let id = parse_id(&record.id)?;
        let verdict = judged.verdict(&record);
        if let Some(reason) = verdict.denied_reason {
            let denial = match reason {
                DeniedReason::UserDenied => Denial::UserDenied,
                _ if record.reason.as_deref() == Some(REASON_NO_ROUTE) => Denial::NoApprovalRoute,
                _ => Denial::ApprovalTimeout,
            };
            return Ok(Err(self.denied(id, denial, reason.as_str().to_owned())));
        }
        if record.state == ApprovalState::Cancelled {
            let detail = record.reason.clone().unwrap_or_default();
            return Ok(Err(self.denied(id, Denial::ApprovalTimeout, detail)));
        }
        if record.decision == Some(ApprovalDecision::AllowOnce) {
            self.core().manager.consume_allow_once(id).await?;
        }
        // Right before spawning: the approved binding against what is on disk now.
        let approved = record
            .request
            .binding
            .as_ref()
            .map(binding_of)
            .transpose()
            .map_err(ServiceError::internal)?;
        if let Some(approved) = approved
            && let Err(mismatch) = approved.verify(bound)
        {
            return Ok(Err(self.denied(
                id,
                Denial::BindingMismatch,
                mismatch.to_string(),
            )));
        }
        Ok(Ok(id))
    }

    /// Spawns the planned argv, announcing the run if it outlasts the threshold and when it
    /// ends.
    async fn execute(
        &self,
        caller: &dyn Caller,
        input: &RunInput,
        plan: &Plan,
        run_id: Uuid,
    ) -> Result<RunOutcome, ServiceError> {
        let core = self.core();
        let limits = &core.limits;
        let timeout = input
            .timeout
            .unwrap_or(limits.run_timeout)
            .min(limits.max_run_timeout);
        core.audit(
            AuditKind::Execution,
            None,
            Some(&run_id.to_string()),
            json!({"status": "started", "token": caller.name(), "agentId": input.context.agent_id,
                   "argv": plan.argv, "cwd": input.cwd, "executable": plan.executable}),
        );
        // Spawned at the real paths the binding was just checked against, not through a symlink
        // that could be swapped in between.
        let started = std::fs::canonicalize(&input.cwd).and_then(|cwd| {
            runner::start(&Spawn {
                executable: &std::fs::canonicalize(&plan.executable)?,
                argv: &plan.argv,
                cwd: &cwd,
                env: &input.env,
                timeout,
                max_output_bytes: limits.max_output_bytes,
            })
        });
        let running = match started {
            Ok(running) => running,
            Err(error) => {
                return Ok(self.denied(
                    run_id,
                    Denial::Policy,
                    format!("cannot start {}: {error}", plan.executable.display()),
                ));
            }
        };
        let announce = {
            let publisher = std::sync::Arc::clone(&core.publisher);
            let after = limits.running_event_after;
            let agent_id = input.context.agent_id.clone();
            let argv = plan.argv.clone();
            let cwd = input.cwd.clone();
            tokio::spawn(async move {
                tokio::time::sleep(after).await;
                publisher.run_event(&RunEvent::Running {
                    run_id,
                    agent_id: &agent_id,
                    argv: &argv,
                    cwd: &cwd,
                });
            })
        };
        let finished = running.finish().await;
        announce.abort();
        let finished = finished.map_err(|error| ServiceError::Internal {
            reason: format!("run {run_id}: {error}"),
        })?;
        let payload = core.publisher.run_event(&RunEvent::Finished {
            run_id,
            finished: &finished,
        });
        self.audit_run(run_id, "finished", payload);
        Ok(RunOutcome::Finished { run_id, finished })
    }

    /// Announces a denied run and builds the outcome.
    fn denied(&self, run_id: Uuid, denial: Denial, detail: String) -> RunOutcome {
        let payload = self.core().publisher.run_event(&RunEvent::Denied {
            run_id,
            denial,
            detail: &detail,
        });
        self.audit_run(run_id, "denied", payload);
        RunOutcome::Denied {
            run_id,
            denial,
            detail,
        }
    }

    /// An execution record of what operators were told; approval-backed runs also carry their
    /// approval id.
    fn audit_run(&self, run_id: Uuid, status: &str, event: Value) {
        let core = self.core();
        let run = run_id.to_string();
        core.audit(
            AuditKind::Execution,
            core.owns_any(run_id).then_some(run.as_str()),
            Some(&run),
            json!({"status": status, "event": event}),
        );
    }
}

/// The command as people read it (approvers, `lastUsedCommand`): the shell string, or the argv
/// in its quoted display form, whose word boundaries survive (`["ls", "a b"]` is not `ls a b`).
fn command_text(input: &RunInput, plan: &Plan) -> String {
    input
        .command
        .clone()
        .unwrap_or_else(|| display_argv(&plan.argv))
}

fn parse_id(id: &str) -> Result<Uuid, ServiceError> {
    Uuid::try_parse(id).map_err(|_| ServiceError::Internal {
        reason: format!("stored approval id {id:?} is not a uuid"),
    })
}
