//! `system.run`: policy, then a person when the policy asks, then execution of exactly the
//! approved argv, on this host or, for a sandboxed session, under bubblewrap.
//!
//! A shell is used only when the request was a shell string (it then runs as `/bin/sh -c`, and
//! that argv is what the approval binds, with every segment's program and program files). The
//! binding is recomputed right before spawning, so a script edited while the approval was
//! pending is refused with `binding-mismatch`. A sandboxed run is planned before anyone is
//! asked and again right before it starts, and every file its binding read must be the file
//! the sandbox sees at that path. Every run has one id, the approval id when a person was
//! asked, carried by all of its events.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use gatehouse_approvals::{
    ApprovalState, CreateApproval, REASON_NO_ROUTE, TurnSource, binding_of, run_binding,
};
use gatehouse_policy::binding::{Binding, BindingInput};
use gatehouse_policy::exec::{
    Decision, ExecCommand, ExecEvaluation, ExecRequest, approval_summary, display_argv, evaluate,
    render_for_shell,
};
use gatehouse_policy::requirement::DeniedReason;
use gatehouse_policy::{ApprovalDecision, Security};
use gatehouse_sandbox::RunRequest;
use gatehouse_store::audit::AuditKind;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::exec::resolve::{spawned_program, unjudged_wrapper};
use crate::exec::runner::{self, Finished, Launch, Spawn};
use crate::exec::sandbox::{Refusal, host_env, require_same_files};
use crate::pipeline::{Asked, ExecContext, Judged, RUN, Target, invalid};
use crate::policy::elevated::level_audit;
use crate::policy::request::{exec_request_with, requested_vars};
use crate::publish::{Denial, RunEvent};
use crate::run_log;
use crate::service::Service;

/// The shell a shell-string command runs under.
pub(crate) const SHELL: &str = "/bin/sh";

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
    /// The variables the requester sets (a value equal to the gateway's own `PATH` or `HOME`
    /// is not one): what the child gets over its base, and what is bound.
    env: BTreeMap<String, String>,
    /// Whether the request was a shell string, bound with its segments.
    shell: bool,
}

impl Plan {
    fn binding_input<'a>(&'a self, input: &'a RunInput) -> BindingInput<'a> {
        BindingInput {
            cwd: &input.cwd,
            argv: &self.argv,
            env: &self.env,
            agent_id: &input.context.agent_id,
            session_key: input.context.session_key.as_deref().unwrap_or_default(),
            resolved_executable: &self.executable,
        }
    }

    /// The binding of what runs: a shell string's covers every segment the analysis found.
    fn bind(&self, input: &RunInput, evaluation: &ExecEvaluation) -> Result<Binding, String> {
        let bound = self.binding_input(input);
        let binding = if self.shell {
            Binding::compute_shell(&bound, &evaluation.segments)
        } else {
            Binding::compute(&bound)
        };
        binding.map_err(|error| error.to_string())
    }

    /// The argv spawned: a shell string's safe bins re-rendered by absolute path with literal
    /// arguments from `evaluation` (the one the run was last checked against), so the shell
    /// searches `PATH` for none of them; an argv as it is.
    fn spawned_argv(&self, evaluation: &ExecEvaluation) -> Vec<String> {
        match self.argv.as_slice() {
            [shell, flag, text] if self.shell => {
                vec![
                    shell.clone(),
                    flag.clone(),
                    render_for_shell(text, evaluation),
                ]
            }
            _ => self.argv.clone(),
        }
    }

    /// The files the binding reads (for a sandbox to see as the host does), as far as they
    /// can be named; a run that could not be bound has none beyond its segments' programs.
    fn bound_files(&self, input: &RunInput, evaluation: &ExecEvaluation) -> Vec<PathBuf> {
        let bound = self.binding_input(input);
        let files = if self.shell {
            Binding::shell_program_files(&bound, &evaluation.segments)
        } else {
            Binding::program_files(&bound)
        };
        files.unwrap_or_default()
    }
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
        let (request, judged) = self.judge(caller, RUN, &input.context, |base| {
            exec_request_with(
                input.command.clone(),
                input.argv.clone(),
                input.cwd.clone(),
                &input.env,
                base,
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
                   "elevated": level_audit(judged.level), "runsOn": judged.target.name(),
                   "policy": {"decision": evaluation.decision.as_str(), "reason": evaluation.reason.to_string()}}),
        );
        let env = requested_vars(&request);
        let plan = match &request.command {
            ExecCommand::Shell(text) => Some(Plan {
                argv: vec!["sh".to_owned(), "-c".to_owned(), text.clone()],
                executable: PathBuf::from(SHELL),
                env,
                shell: true,
            }),
            ExecCommand::Argv(argv) => argv
                .first()
                .and_then(|program| spawned_program(program, &input.cwd, &request.env, evaluation))
                .map(|executable| Plan {
                    argv: argv.clone(),
                    executable,
                    env,
                    shell: false,
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
        let spawned = (!plan.shell).then_some(plan.executable.as_path());
        if let Some(reason) = judged_wrappers
            .then(|| unjudged_wrapper(spawned, evaluation, &policy.safe_bin_trusted_dirs))
            .flatten()
        {
            return Ok(self.denied(Uuid::new_v4(), Denial::Policy, reason));
        }
        if evaluation.decision == Decision::Deny {
            let reason = evaluation.reason.to_string();
            return Ok(self.denied(Uuid::new_v4(), Denial::Policy, reason));
        }
        // What the run starts with, and where, is settled before anyone is asked: a person is
        // never asked about a run that would be refused.
        if let Err(refusal) = self.launch(&input, &plan, &judged.target, evaluation, false) {
            return Ok(self.refused(Uuid::new_v4(), refusal));
        }
        let (run_id, fresh) = if evaluation.decision == Decision::Ask {
            // An approval-backed run must bind exactly what it runs; refuse when it cannot.
            let binding = match plan.bind(&input, evaluation) {
                Ok(binding) => binding,
                Err(error) => return Ok(self.denied(Uuid::new_v4(), Denial::Policy, error)),
            };
            match self
                .ask_to_run(caller, &input, &plan, &request, &judged, binding)
                .await?
            {
                Ok(approved) => approved,
                Err(denied) => return Ok(denied),
            }
        } else {
            self.core().record_allowlist_uses(
                &input.context.agent_id,
                &command_text(&input, &plan),
                evaluation,
            );
            (Uuid::new_v4(), None)
        };
        // Right before spawning: a sandboxed run is planned again, and must see every file
        // the binding read as the host does.
        let now = fresh.as_ref().unwrap_or(evaluation);
        match self.launch(&input, &plan, &judged.target, now, true) {
            Ok(launch) => self.execute(caller, &input, &plan, &launch, run_id).await,
            Err(refusal) => Ok(self.refused(run_id, refusal)),
        }
    }

    /// Where and with what the run starts: a host run's built environment, or a sandboxed
    /// run's plan, checked against each program of `evaluation` and, `with_files`, every file
    /// the binding reads.
    fn launch(
        &self,
        input: &RunInput,
        plan: &Plan,
        target: &Target,
        evaluation: &ExecEvaluation,
        with_files: bool,
    ) -> Result<Launch, Refusal> {
        // Spawned at the real paths the binding was checked against, not through a symlink
        // that could be swapped in between.
        let real = |path: &std::path::Path| {
            std::fs::canonicalize(path).map_err(|error| Refusal {
                denial: Denial::Policy,
                detail: format!("cannot start {}: {error}", path.display()),
            })
        };
        let cwd = real(&input.cwd)?;
        let executable = real(&plan.executable)?;
        let argv = plan.spawned_argv(evaluation);
        match target {
            Target::Host => Ok(Launch::Host {
                env: host_env(&plan.env)?,
                executable,
                argv,
                cwd,
            }),
            Target::Sandbox(settings) => {
                let planned = self.core().sandboxes.plan(
                    settings,
                    &RunRequest {
                        agent_id: &input.context.agent_id,
                        executable: &executable,
                        argv: &argv,
                        cwd: &cwd,
                        env: &plan.env,
                    },
                )?;
                let bound = if with_files {
                    plan.bound_files(input, evaluation)
                } else {
                    Vec::new()
                };
                require_same_files(&planned, &bound, evaluation)?;
                Ok(Launch::Sandbox(Box::new(planned)))
            }
        }
    }

    /// Asks a person, then decides from the answer: the approval's id to run under (with the
    /// fresh evaluation a shell string was checked against), or the denial (already
    /// announced). A run allowed once takes its single use here, and the approved binding is
    /// checked against the disk right before spawning, a shell string's against a fresh
    /// evaluation of its text.
    async fn ask_to_run(
        &self,
        caller: &dyn Caller,
        input: &RunInput,
        plan: &Plan,
        request: &ExecRequest,
        judged: &Judged,
        binding: Binding,
    ) -> Result<Result<(Uuid, Option<ExecEvaluation>), RunOutcome>, ServiceError> {
        let evaluation = &judged.evaluation;
        let asked = Asked {
            command: command_text(input, plan),
            argv: plan.argv.clone(),
            cwd: &input.cwd,
            env: &plan.env,
            host: Some(judged.target.name().to_owned()),
            resolved_path: evaluation
                .segments
                .first()
                .and_then(|segment| segment.resolved_path.clone()),
            turn_source: input.turn_source.clone(),
            binding: Some(run_binding(&binding)),
            summary: approval_summary(request, evaluation),
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
        let fresh = plan.shell.then(|| evaluate(request, &judged.policy));
        let now = fresh.as_ref().unwrap_or(evaluation);
        if let Some(approved) = approved {
            let bound = plan.binding_input(input);
            let checked = if plan.shell {
                approved.verify_shell(&bound, &now.segments)
            } else {
                approved.verify(&bound)
            };
            if let Err(mismatch) = checked {
                return Ok(Err(self.denied(
                    id,
                    Denial::BindingMismatch,
                    mismatch.to_string(),
                )));
            }
        }
        Ok(Ok((id, fresh)))
    }

    /// Spawns the launch, announcing the run if it outlasts the threshold and when it ends.
    async fn execute(
        &self,
        caller: &dyn Caller,
        input: &RunInput,
        plan: &Plan,
        launch: &Launch,
        run_id: Uuid,
    ) -> Result<RunOutcome, ServiceError> {
        let core = self.core();
        let limits = &core.limits;
        let timeout = input
            .timeout
            .unwrap_or(limits.run_timeout)
            .min(limits.max_run_timeout);
        let runs_on = match launch {
            Launch::Host { .. } => "gateway",
            Launch::Sandbox(_) => "sandbox",
        };
        core.audit(
            AuditKind::Execution,
            None,
            Some(&run_id.to_string()),
            json!({"status": "started", "token": caller.name(), "agentId": input.context.agent_id,
                   "argv": plan.argv, "cwd": input.cwd, "executable": plan.executable,
                   "runsOn": runs_on}),
        );
        let started = runner::start(&Spawn {
            launch,
            timeout,
            max_output_bytes: limits.max_output_bytes,
        });
        let running = match started {
            Ok(running) => running,
            Err(error) => {
                return Ok(self.denied(
                    run_id,
                    Denial::Policy,
                    format!("cannot start {}: {error}", launch.program().display()),
                ));
            }
        };
        let announce = {
            let core = std::sync::Arc::clone(core);
            let after = limits.running_event_after;
            let agent_id = input.context.agent_id.clone();
            let argv = plan.argv.clone();
            let cwd = input.cwd.clone();
            tokio::spawn(async move {
                tokio::time::sleep(after).await;
                run_log::announce(
                    &core,
                    &RunEvent::Running {
                        run_id,
                        agent_id: &agent_id,
                        argv: &argv,
                        cwd: &cwd,
                    },
                );
            })
        };
        let finished = running.finish().await;
        announce.abort();
        let finished = finished.map_err(|error| ServiceError::Internal {
            reason: format!("run {run_id}: {error}"),
        })?;
        let payload = run_log::announce(
            core,
            &RunEvent::Finished {
                run_id,
                finished: &finished,
            },
        );
        self.audit_run(run_id, "finished", payload);
        Ok(RunOutcome::Finished { run_id, finished })
    }

    /// Announces a run refused before it started (its environment, its sandbox).
    fn refused(&self, run_id: Uuid, refusal: Refusal) -> RunOutcome {
        self.denied(run_id, refusal.denial, refusal.detail)
    }

    /// Announces a denied run and builds the outcome.
    fn denied(&self, run_id: Uuid, denial: Denial, detail: String) -> RunOutcome {
        let payload = run_log::announce(
            self.core(),
            &RunEvent::Denied {
                run_id,
                denial,
                detail: &detail,
            },
        );
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
