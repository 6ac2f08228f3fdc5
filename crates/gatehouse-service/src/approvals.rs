//! Asking a person and answering: create an approval and wait for it, look approvals up, list
//! them, and decide one.
//!
//! Operators see every approval and may name one by id prefix; any other caller sees only the
//! approvals it requested, by full id, and learns nothing about others.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use gatehouse_approvals::{
    AllowlistWrite, ApprovalError, ApprovalRecord, ApprovalState, CreateApproval, Created,
    IdDisclosure, ListFilter, Offered, ResolveOutcome, TurnSource, run_binding,
};
use gatehouse_policy::binding::{Binding, BindingInput};
use gatehouse_policy::exec::approval_summary;
use gatehouse_policy::requirement::DeniedReason;
use gatehouse_policy::{ApprovalDecision, Security};
use uuid::Uuid;

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::exec::resolve::spawned_program;
use crate::pipeline::{Asked, ExecContext, Judged, REQUEST, invalid};
use crate::policy::compose::effective_ask_fallback;
use crate::policy::request::{exec_request_with, requested_vars};
use crate::run::SHELL;
use crate::service::Service;

/// The most approvals one listing returns.
const MAX_LIST: usize = 1_000;

/// The longest reason a resolver may give; it is stored, audited and sent to every operator.
const MAX_REASON_CHARS: usize = 1_000;

// Cards tell people to type `SHORT_ID_LEN` digits, and the manager keeps that many unique
// (`SHORT_ID_DIGITS`): were cards to show fewer, a typed short id could name two approvals.
const _: () = assert!(gatehouse_chat::render::SHORT_ID_LEN == gatehouse_approvals::SHORT_ID_DIGITS);

/// A command to ask a person about. `command` is what approvers read; with `argv`, it must
/// describe `argv` exactly, which is then what the policy judges and allow-always persists.
#[derive(Debug, Clone, Default)]
pub struct RequestInput {
    /// An id chosen by the requester (a full UUID), so it can name the approval while waiting.
    pub id: Option<String>,
    /// The command as approvers read it.
    pub command: String,
    /// The exact argv, when known.
    pub argv: Option<Vec<String>>,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Environment overrides.
    pub env: BTreeMap<String, String>,
    /// The exec host it would run on, as the requester names it.
    pub host: Option<String>,
    /// How long a person has, instead of the default.
    pub timeout: Option<Duration>,
    /// Answer as soon as the approval is stored, instead of when it is decided.
    pub two_phase: bool,
    /// Where the agent's turn came from, so the prompt can go back there.
    pub turn_source: Option<TurnSource>,
    /// Whose settings apply.
    pub context: ExecContext,
}

/// What a request came to.
#[derive(Debug, Clone)]
pub enum RequestOutcome {
    /// Two-phase: the approval is stored and announced; wait for it separately.
    Accepted(Created),
    /// The approval as it ended, and for one nobody answered, what `askFallback` made of it.
    Decided {
        /// The final record (boxed: a record is many times the size of an acknowledgement).
        record: Box<ApprovalRecord>,
        /// Set when nobody answered in time.
        fallback: Option<Fallback>,
    },
}

/// What `askFallback` made of an approval nobody answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fallback {
    /// The fallback that applied: a `full` fallback under `allowlist` acts as `allowlist`, and
    /// naming the configured one would tell the requester it could have run.
    pub ask_fallback: Security,
    /// Whether the command may run.
    pub approved: bool,
    /// Why not, when it may not.
    pub denied_reason: Option<DeniedReason>,
}

/// An approval as a caller may read it, with the decisions an operator may still give (none
/// once it left `pending`).
#[derive(Debug, Clone)]
pub struct ApprovalView {
    /// The stored record.
    pub record: ApprovalRecord,
    /// What may still be answered.
    pub offered: Option<Offered>,
}

/// What a decision did.
#[derive(Debug)]
pub struct Decided {
    /// Applied, repeated (idempotent success) or rejected (`applied: false`), with the winner.
    pub outcome: ResolveOutcome,
    /// Ids of allowlist entries an applied allow-always added.
    pub allowlist_added: Vec<String>,
    /// Set when allow-always was decided but persisting its patterns failed: the decision
    /// stands for this run, the next run asks again.
    pub allowlist_error: Option<String>,
}

impl Service {
    /// `exec.approval.request`: creates a pending approval and answers when it is decided, or
    /// at once when `two_phase`; a blocking request answers [`ServiceError::ShuttingDown`] once
    /// the service stops. A chosen `id` that is taken, or whose short id is, is refused without
    /// saying whose approval holds it.
    pub async fn request(
        &self,
        caller: &dyn Caller,
        input: RequestInput,
    ) -> Result<RequestOutcome, ServiceError> {
        if let Some(id) = &input.id {
            full_id(id)?;
        }
        let (command, argv) = match input.argv {
            Some(argv) => (None, Some(argv)),
            None => (Some(input.command.clone()), None),
        };
        let (request, judged) = self.judge(caller, REQUEST, &input.context, |base| {
            // Approvers read `command`, the policy judges and allow-always persists `argv`: the
            // two must say the same, or a harmless text could front for any program; and the
            // text must show what runs, not only the payload of a shell whose profile scripts
            // or other syntax the analysis does not read.
            if let Some(argv) = &argv {
                let text = gatehouse_policy::exec::node_command_text(argv, Some(&input.command));
                if !text.valid {
                    return Err(invalid(format!(
                        "`command` must describe `argv` exactly (as {:?})",
                        text.display_command
                    )));
                }
                if !text.shows_what_runs {
                    return Err(invalid(format!(
                        "`command` names only the payload of a shell the analysis cannot read \
                         through (a login shell, a shell named by path, another shell's \
                         syntax, an option beside `-c`): approvers must see what runs, so \
                         send the whole command (as {:?})",
                        text.display_command
                    )));
                }
            }
            exec_request_with(command, argv.clone(), input.cwd.clone(), &input.env, base)
                .map_err(invalid)
        })?;
        let evaluation = &judged.evaluation;
        let env = requested_vars(&request);
        let resolved = match &argv {
            Some(argv) => argv
                .first()
                .and_then(|program| spawned_program(program, &input.cwd, &request.env, evaluation)),
            None => evaluation
                .segments
                .first()
                .and_then(|segment| segment.resolved_path.clone()),
        };
        // Bound as `system.run` would bind it: the exact argv and its executable, or a shell
        // string as `/bin/sh -c TEXT` with every segment's program and program files.
        let shell_argv;
        let (bound_argv, executable, segments) = match (&argv, &resolved) {
            (Some(argv), Some(executable)) => (argv.as_slice(), Some(executable.as_path()), None),
            (Some(argv), None) => (argv.as_slice(), None, None),
            (None, _) => {
                shell_argv = ["sh".to_owned(), "-c".to_owned(), input.command.clone()];
                let shell = Some(std::path::Path::new(SHELL));
                (shell_argv.as_slice(), shell, Some(&evaluation.segments))
            }
        };
        let binding = executable.and_then(|executable| {
            let bound = BindingInput {
                cwd: &input.cwd,
                argv: bound_argv,
                env: &env,
                agent_id: &input.context.agent_id,
                session_key: input.context.session_key.as_deref().unwrap_or_default(),
                resolved_executable: executable,
            };
            let binding = match segments {
                Some(segments) => Binding::compute_shell(&bound, segments),
                None => Binding::compute(&bound),
            };
            binding.ok().map(|binding| run_binding(&binding))
        });
        let asked = Asked {
            command: input.command,
            argv: argv.unwrap_or_default(),
            cwd: &input.cwd,
            env: &env,
            host: input.host,
            resolved_path: resolved,
            turn_source: input.turn_source,
            binding,
            summary: approval_summary(&request, evaluation),
        };
        let create = CreateApproval {
            id: input.id,
            request: Service::approval_request(caller, &input.context, &judged, asked),
            timeout: input.timeout,
            allow_always_patterns: judged.evaluation.allow_always_patterns.clone(),
        };
        if input.two_phase {
            let route = self.has_approval_route(&create.request);
            let (created, _) = self.core().create(caller.name(), create, route).await?;
            return Ok(RequestOutcome::Accepted(created));
        }
        let record = self.create_and_await(caller.name(), create).await?;
        let fallback = fallback(&record, &judged);
        Ok(RequestOutcome::Decided {
            record: Box::new(record),
            fallback,
        })
    }

    /// `exec.approval.waitDecision`: waits until the approval is settled and returns it; at once
    /// when it already is. Once the service is shutting down a wait still open answers
    /// [`ServiceError::ShuttingDown`] at once: a person may take longer than the shutdown
    /// grace, and the approval is left pending for the next start to cancel.
    pub async fn wait_decision(
        &self,
        caller: &dyn Caller,
        key: &str,
    ) -> Result<ApprovalRecord, ServiceError> {
        let id = full_id(key)?;
        // A pending approval this run holds is checked in memory; only others need the record.
        if !caller.sees_every_approval() && !self.core().owns(caller.name(), id) {
            self.visible_record(caller, id).await?;
        }
        // Biased: a decision that is ready when polled wins over the shutdown; one that must
        // first be read from the store may lose to it, and the caller asks again after the
        // restart.
        tokio::select! {
            biased;
            record = self.core().manager.await_decision(id) => Ok(record?),
            () = self.shutdown_signal() => Err(ServiceError::ShuttingDown),
        }
    }

    /// `exec.approval.get`: one approval by id (operators: or unique prefix).
    pub async fn approval(
        &self,
        caller: &dyn Caller,
        key: &str,
    ) -> Result<ApprovalView, ServiceError> {
        let record = if caller.sees_every_approval() {
            self.core()
                .manager
                .get(key, IdDisclosure::Revealed)
                .await
                .map_err(key_error)?
        } else {
            self.visible_record(caller, full_id(key)?).await?
        };
        Ok(self.view(record))
    }

    /// `exec.approval.list`: stored approvals matching `filter` (at most 1,000), in its order.
    pub async fn list(&self, mut filter: ListFilter) -> Result<Vec<ApprovalView>, ServiceError> {
        filter.limit = filter.limit.min(MAX_LIST);
        let records = self.core().manager.list(filter).await?;
        Ok(records
            .into_iter()
            .map(|record| self.view(record))
            .collect())
    }

    /// `exec.approval.resolve`: answers an approval by id or unique prefix as `caller`. The
    /// first answer wins; later answers within the grace period report the winner with
    /// `applied: false`.
    pub async fn resolve(
        &self,
        caller: &dyn Caller,
        key: &str,
        decision: ApprovalDecision,
        reason: Option<String>,
    ) -> Result<Decided, ServiceError> {
        let reason = reason.filter(|reason| !reason.trim().is_empty());
        if let Some(reason) = &reason
            && reason.chars().count() > MAX_REASON_CHARS
        {
            return Err(invalid(format!(
                "reason is longer than {MAX_REASON_CHARS} characters"
            )));
        }
        let resolved = self
            .core()
            .manager
            .resolve_because(key, decision, caller.name(), reason, IdDisclosure::Revealed)
            .await
            .map_err(key_error)?;
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
        Ok(Decided {
            outcome: resolved.outcome,
            allowlist_added,
            allowlist_error,
        })
    }

    fn view(&self, record: ApprovalRecord) -> ApprovalView {
        let offered = self.core().offered(&record);
        ApprovalView { record, offered }
    }

    /// The stored approval `id` if the caller may see it: operators every one, anyone else
    /// those it requested. This run remembers who asked while it holds an approval, and the
    /// stored record says so afterwards, also after a restart. Any other id reads as unknown,
    /// so nothing leaks.
    async fn visible_record(
        &self,
        caller: &dyn Caller,
        id: Uuid,
    ) -> Result<ApprovalRecord, ServiceError> {
        let not_found = || ServiceError::NotFound {
            reason: format!("unknown approval {id}"),
        };
        let record = match self
            .core()
            .manager
            .get(&id.to_string(), IdDisclosure::Hidden)
            .await
        {
            Ok(record) => record,
            Err(ApprovalError::Unknown { .. }) => return Err(not_found()),
            Err(other) => return Err(other.into()),
        };
        let name = caller.name();
        if caller.sees_every_approval()
            || self.core().owns(name, id)
            || record.request.requested_by.as_deref() == Some(name)
        {
            Ok(record)
        } else {
            Err(not_found())
        }
    }
}

/// What `askFallback` makes of an approval nobody answered; `None` when a person answered.
fn fallback(record: &ApprovalRecord, judged: &Judged) -> Option<Fallback> {
    if record.state != ApprovalState::Expired {
        return None;
    }
    let result = judged.verdict(record);
    Some(Fallback {
        ask_fallback: effective_ask_fallback(judged.ask_fallback, judged.policy.security),
        approved: result.approved,
        denied_reason: result.denied_reason,
    })
}

/// A full approval id, the only way callers other than operators may name one: a prefix would
/// let them probe for approvals that are not theirs.
pub(crate) fn full_id(key: &str) -> Result<Uuid, ServiceError> {
    Uuid::try_parse(key).map_err(|_| invalid(format!("{key:?} is not a full approval id")))
}

/// The manager's refusal of a key people typed: one it cannot read is a bad input.
fn key_error(error: ApprovalError) -> ServiceError {
    match error {
        ApprovalError::InvalidKey { .. } | ApprovalError::InvalidId { .. } => {
            invalid(error.to_string())
        }
        other => other.into(),
    }
}
