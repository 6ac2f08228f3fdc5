//! `gatehouse check`: may this command run without a person? One command from the arguments,
//! or a batch of JSON requests on stdin (`--jsonl`), one decision per line, in order.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use gatehouse_config::{Config, DEFAULT_AGENT_ID};
use gatehouse_policy::exec::{Decision, ExecEvaluation, ExecPolicy, ExecRequest, evaluate};
use gatehouse_store::approvals_file::{
    ExecApprovalsFile, HostFallback, RequestedPolicy, parse_str,
};
use serde::Deserialize;

use super::check_json::DecisionJson;

/// Exit status of an `ask` decision.
const EXIT_ASK: u8 = 10;
/// Exit status of a `deny` decision.
const EXIT_DENY: u8 = 20;

/// Flags of `gatehouse check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Config file (JSON5, OpenClaw keys); built-in defaults when absent.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// OpenClaw `exec-approvals.json`: host settings (stricter wins) and allowlists.
    #[arg(long, value_name = "FILE")]
    approvals: Option<PathBuf>,
    /// Agent id whose settings apply.
    #[arg(long, value_name = "ID", default_value = DEFAULT_AGENT_ID)]
    agent: String,
    /// Working directory the command would run in; the current one when absent.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print the decision as JSON.
    #[arg(long)]
    json: bool,
    /// Read one JSON request per line on stdin and write one JSON decision per line.
    #[arg(long, conflicts_with = "command")]
    jsonl: bool,
    /// One argument: a shell string. Several: an argv run without a shell.
    #[arg(
        value_name = "COMMAND",
        required_unless_present = "jsonl",
        trailing_var_arg = true
    )]
    command: Vec<String>,
}

/// One `--jsonl` request line.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestLine {
    command: Option<String>,
    argv: Option<Vec<String>>,
    cwd: Option<PathBuf>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    agent: Option<String>,
}

/// Policy sources shared by every request of one invocation.
struct Sources {
    config: Config,
    approvals: Option<ExecApprovalsFile>,
}

/// Runs the subcommand.
pub(crate) fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let sources = Sources {
        config: super::config::load(args.config.as_deref())?,
        approvals: args.approvals.as_deref().map(load_approvals).transpose()?,
    };
    let cwd = match args.cwd {
        Some(cwd) => cwd,
        None => std::env::current_dir().context("cannot determine the current directory")?,
    };
    if args.jsonl {
        return run_batch(&sources, &args.agent, &cwd);
    }
    let mut command = args.command;
    let request = if command.len() == 1 {
        ExecRequest::shell(command.remove(0), cwd)
    } else {
        ExecRequest::argv(command, cwd)
    };
    let request = with_process_env(request, &BTreeMap::new());
    let evaluation = evaluate(&request, &sources.policy(&args.agent));
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let json = serde_json::to_string(&DecisionJson::from(&evaluation))?;
        writeln!(stdout, "{json}")?;
    } else {
        print_human(&mut stdout, &evaluation)?;
    }
    Ok(exit_code(evaluation.decision))
}

impl Sources {
    /// The config's exec settings for `agent`, composed with the approvals file when given:
    /// the stricter `security` and the more asking `ask` win, and its allowlist applies.
    fn policy(&self, agent: &str) -> ExecPolicy {
        let mut policy = self.config.exec_settings(agent).policy;
        let Some(file) = &self.approvals else {
            return policy;
        };
        let requested = RequestedPolicy {
            security: policy.security,
            ask: policy.ask,
        };
        let effective = file.effective_policy(agent, requested);
        policy.security = effective.security.effective;
        policy.ask = effective.ask.effective;
        policy.auto_allow_skills |= effective.auto_allow_skills;
        let fallback = HostFallback {
            security: requested.security,
            ask: requested.ask,
            ..HostFallback::default()
        };
        policy.allowlist = file
            .resolve_agent(agent, &fallback)
            .allowlist
            .into_iter()
            .map(|entry| gatehouse_policy::exec::AllowlistEntry {
                pattern: entry.pattern.clone(),
                arg_pattern: entry.arg_pattern.clone(),
            })
            .collect();
        policy
    }
}

fn load_approvals(path: &Path) -> anyhow::Result<ExecApprovalsFile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read approvals file {}", path.display()))?;
    let parsed = parse_str(&text, path)?;
    for note in &parsed.report.notes {
        eprintln!("gatehouse: warning: {}: {note}", path.display());
    }
    Ok(parsed.file)
}

/// `PATH` and `HOME` decide what a bare name runs and what `~` means; requests inherit them
/// from this process unless they set their own.
fn with_process_env(mut request: ExecRequest, overrides: &BTreeMap<String, String>) -> ExecRequest {
    for key in ["PATH", "HOME"] {
        if let Ok(value) = std::env::var(key) {
            request.env.insert(key.to_owned(), value);
        }
    }
    request
        .env
        .extend(overrides.iter().map(|(k, v)| (k.clone(), v.clone())));
    request
}

/// Batch mode: every input line yields exactly one output line, in order; a line that is not
/// a valid request yields a `deny` naming the problem, so the two streams stay aligned.
fn run_batch(
    sources: &Sources,
    default_agent: &str,
    default_cwd: &Path,
) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.context("cannot read stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        let json = match request_from_line(&line, default_cwd) {
            Ok((request, agent)) => {
                let agent = agent.as_deref().unwrap_or(default_agent);
                DecisionJson::from(&evaluate(&request, &sources.policy(agent)))
            }
            Err(problem) => DecisionJson::invalid_request(&problem),
        };
        writeln!(stdout, "{}", serde_json::to_string(&json)?)?;
        stdout.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

fn request_from_line(
    line: &str,
    default_cwd: &Path,
) -> Result<(ExecRequest, Option<String>), String> {
    let parsed: RequestLine = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let cwd = parsed.cwd.unwrap_or_else(|| default_cwd.to_owned());
    let request = match (parsed.command, parsed.argv) {
        (Some(command), None) => ExecRequest::shell(command, cwd),
        (None, Some(argv)) if !argv.is_empty() => ExecRequest::argv(argv, cwd),
        (None, Some(_)) => return Err("`argv` is empty".to_owned()),
        (None, None) => return Err("set `command` or `argv`".to_owned()),
        (Some(_), Some(_)) => return Err("set `command` or `argv`, not both".to_owned()),
    };
    Ok((with_process_env(request, &parsed.env), parsed.agent))
}

fn print_human(out: &mut impl Write, evaluation: &ExecEvaluation) -> std::io::Result<()> {
    writeln!(out, "{}: {}", evaluation.decision, evaluation.reason)?;
    for segment in &evaluation.segments {
        let path = segment
            .resolved_path
            .as_ref()
            .map_or_else(|| "(unresolved)".to_owned(), |p| p.display().to_string());
        writeln!(
            out,
            "  {} -> {path}: {}",
            segment.argv.join(" "),
            segment.reason
        )?;
    }
    for warning in &evaluation.warnings {
        eprintln!("gatehouse: warning: {warning}");
    }
    Ok(())
}

fn exit_code(decision: Decision) -> ExitCode {
    match decision {
        Decision::Allow => ExitCode::SUCCESS,
        Decision::Ask => ExitCode::from(EXIT_ASK),
        Decision::Deny => ExitCode::from(EXIT_DENY),
    }
}
