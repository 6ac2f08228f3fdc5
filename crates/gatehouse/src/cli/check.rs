//! `gatehouse check`: may this command run without a person? One command from the arguments,
//! or a batch of JSON requests on stdin (`--jsonl`), one decision per line, in order; or one
//! tool call (`--tool`, see `check_tool.rs`).

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use gatehouse_chat::sanitize::make_visible;
use gatehouse_config::DEFAULT_AGENT_ID;
use gatehouse_policy::exec::{
    Decision, ExecEvaluation, ExecPolicy, ExecRequest, SatisfiedBy, evaluate,
};
use gatehouse_service::policy::report::DecisionJson;
use gatehouse_service::policy::request::{exec_request, with_host_env};
use serde::Deserialize;

use super::exec_sources::Sources;

/// Exit status of an `ask` decision.
const EXIT_ASK: u8 = 10;
/// Exit status of a `deny` decision.
const EXIT_DENY: u8 = 20;

/// Flags of `gatehouse check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Config file (JSON5, OpenClaw keys); built-in defaults when absent.
    #[arg(long, value_name = "FILE", env = "GATEHOUSE_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    /// OpenClaw `exec-approvals.json`: host settings (stricter wins) and allowlists.
    #[arg(long, value_name = "FILE")]
    approvals: Option<PathBuf>,
    /// Agent id whose settings apply.
    #[arg(long, value_name = "ID", default_value = DEFAULT_AGENT_ID)]
    pub(crate) agent: String,
    /// Working directory the command would run in; the current one when absent.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print the decision as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// Read one JSON request per line on stdin and write one JSON decision per line, in order
    /// (an invalid line gets a `deny` naming the problem); exits 0 once every line is answered.
    #[arg(long, conflicts_with_all = ["command", "tool"])]
    jsonl: bool,
    /// Check a tool call instead of a command: the tool as an agent host names it (`read`,
    /// `web_fetch`, `mcp__github__create_issue`), with `--params`. Host names in URLs are
    /// resolved as the gateway resolves them (`gateway.dns`).
    #[arg(long, value_name = "TOOL", conflicts_with = "command")]
    pub(crate) tool: Option<String>,
    /// The tool call's parameters as a JSON object, in the reference's names
    /// (`{"path":"src/a.rs"}`, `{"url":"https://…"}`, `{"command":"ls","cwd":"/srv"}`).
    #[arg(long, value_name = "JSON", requires = "tool", default_value = "{}")]
    pub(crate) params: String,
    /// The tool call's sender owns the deployment (owner-only tools).
    #[arg(long, requires = "tool")]
    pub(crate) owner: bool,
    /// The model provider of the session (`openai`), for provider rules and `apply_patch`.
    #[arg(long, value_name = "NAME", requires = "tool")]
    pub(crate) provider: Option<String>,
    /// The model of the session (`gpt-5`).
    #[arg(long, value_name = "NAME", requires = "tool")]
    pub(crate) model: Option<String>,
    /// One argument: a shell string. Several: an argv run without a shell.
    #[arg(
        value_name = "COMMAND",
        required_unless_present_any = ["jsonl", "tool"],
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

/// Runs the subcommand.
pub(crate) fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let sources = Sources::load(args.config.as_deref(), args.approvals.as_deref())?;
    sources
        .known_agent(&args.agent)
        .map_err(anyhow::Error::msg)?;
    let cwd = match args.cwd.clone() {
        Some(cwd) => cwd,
        None => std::env::current_dir().context("cannot determine the current directory")?,
    };
    if args.jsonl {
        return run_batch(&sources, &args.agent, &cwd);
    }
    if let Some(tool) = &args.tool {
        let decision = super::check_tool::decide(&sources, &args, tool)?;
        let mut stdout = std::io::stdout().lock();
        super::check_tool::print(&mut stdout, &decision, args.json)?;
        return Ok(exit_code(decision.decision));
    }
    let mut command = args.command;
    let request = if command.len() == 1 {
        ExecRequest::shell(command.remove(0), cwd)
    } else {
        ExecRequest::argv(command, cwd)
    };
    let request = with_host_env(request, &BTreeMap::new());
    let evaluation = evaluate(&request, &sources.policy(&args.agent));
    for warning in &evaluation.warnings {
        eprintln!("gatehouse: warning: {warning}");
    }
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let json = serde_json::to_string(&DecisionJson::from(&evaluation))?;
        writeln!(stdout, "{json}")?;
    } else {
        print_human(&mut stdout, &evaluation)?;
    }
    Ok(exit_code(evaluation.decision))
}

/// Batch mode: every input line yields exactly one output line, in order; a line that is not
/// a valid request yields a `deny` naming the problem, so the two streams stay aligned.
/// The sources do not change during a batch, so each agent's policy is composed once.
fn run_batch(
    sources: &Sources,
    default_agent: &str,
    default_cwd: &Path,
) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let mut policies: HashMap<String, ExecPolicy> = HashMap::new();
    for line in stdin.lock().lines() {
        let line = line.context("cannot read stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        let json = match request_from_line(&line, default_cwd) {
            Ok((request, agent)) => {
                let agent = agent.as_deref().unwrap_or(default_agent);
                match sources.known_agent(agent) {
                    Ok(()) => {
                        let policy = policies
                            .entry(agent.to_owned())
                            .or_insert_with(|| sources.policy(agent));
                        DecisionJson::from(&evaluate(&request, policy))
                    }
                    Err(problem) => DecisionJson::invalid_request(&problem),
                }
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
    let mut request = exec_request(parsed.command, parsed.argv, cwd, &parsed.env)?;
    // A line describes the whole environment the command would see on this host, so its
    // `PATH` and `HOME` are the host's, as the gateway's own are, not a requester's override.
    for key in ["PATH", "HOME"] {
        if request.env.contains_key(key) {
            request.inherited.insert(key.to_owned());
        }
    }
    Ok((request, parsed.agent))
}

/// The decision for a person. Words, paths and reasons come from the command, so control
/// characters, ANSI and bidi marks in them are shown as markers: a printed line cannot be made
/// to look like another decision.
fn print_human(out: &mut impl Write, evaluation: &ExecEvaluation) -> std::io::Result<()> {
    let reason = make_visible(&evaluation.reason.to_string());
    writeln!(out, "{}: {reason}", evaluation.decision)?;
    for segment in &evaluation.segments {
        let program = if segment.satisfied_by == Some(SatisfiedBy::Builtin) {
            "(shell builtin)".to_owned()
        } else {
            shown_path(segment.resolved_path.as_deref())
        };
        writeln!(
            out,
            "  {} -> {program}: {}",
            make_visible(&segment.argv.join(" ")).replace('\n', "\\n"),
            make_visible(&segment.reason.to_string())
        )?;
        for wrapper in &segment.looked_through {
            let path = shown_path(wrapper.resolved_path.as_deref());
            writeln!(out, "    through {} -> {path}", make_visible(&wrapper.word))?;
        }
    }
    Ok(())
}

fn shown_path(path: Option<&Path>) -> String {
    path.map_or_else(
        || "(unresolved)".to_owned(),
        |p| make_visible(&p.display().to_string()),
    )
}

fn exit_code(decision: Decision) -> ExitCode {
    match decision {
        Decision::Allow => ExitCode::SUCCESS,
        Decision::Ask => ExitCode::from(EXIT_ASK),
        Decision::Deny => ExitCode::from(EXIT_DENY),
    }
}
