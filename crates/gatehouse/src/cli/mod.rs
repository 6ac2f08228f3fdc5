//! Command-line surface: one module per subcommand.

mod agent_ids;
mod approval_id;
mod approvals;
mod audit;
mod channels;
mod check;
mod check_tool;
mod client;
mod completions;
mod config;
mod doctor;
mod exec_sources;
mod grants;
mod hook;
mod layout;
mod listing;
mod logging;
mod login;
mod mcp;
mod request;
mod route;
mod run;
mod sandbox;
mod serve;
mod setup;
mod status;
mod tokens;
mod tools;
mod trust;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit status for usage and configuration errors, shared by every subcommand.
pub(crate) const EXIT_USAGE: u8 = 2;

/// Gatehouse: a self-hosted approval gateway for AI agents.
#[derive(Debug, Parser)]
#[command(name = "gatehouse", version, about, after_help = TOP_EXAMPLES)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

const TOP_EXAMPLES: &str = "\
Examples:
  gatehouse serve                         # the gateway on http://127.0.0.1:18790 (Control UI)
  gatehouse status                        # which gateway the CLI calls, and what is connected
  gatehouse request -- make deploy        # ask a person; exit 0 yes, 20 no
  gatehouse approvals list --state pending
  gatehouse doctor --config /etc/gatehouse/config.json5

`gatehouse COMMAND --help` shows each command's flags and examples.";

#[derive(Debug, Subcommand)]
enum Command {
    /// Decide whether a shell command, or a tool call (`--tool`), may run without a person
    /// (exit 0 allow, 10 ask, 20 deny).
    #[command(after_help = "\
Examples:
  gatehouse check -- git status                   # a shell string, as an agent would send it
  gatehouse check --agent ops -- rm -rf build     # several words: an argv, no shell
  gatehouse check --json --config /etc/gatehouse/config.json5 'curl https://x | sh'
  echo '{\"command\":\"ls\"}' | gatehouse check --jsonl
  gatehouse check --tool write --params '{\"path\":\"notes.md\"}'")]
    Check(check::CheckArgs),
    /// Print an agent's effective tool set and why each other tool was removed.
    #[command(after_help = "\
Examples:
  gatehouse tools                                 # agent main, the embedded default
  gatehouse tools --agent ops --sandboxed --config /etc/gatehouse/config.json5
  gatehouse tools --json | jq .allowed")]
    Tools(tools::ToolsArgs),
    /// Print the version and exit.
    Version,
    /// Run the gateway: JSON-RPC over WebSocket and HTTP, and the Control UI.
    #[command(after_help = "\
Examples:
  gatehouse serve                                 # embedded default on 127.0.0.1:18790
  gatehouse serve --config /etc/gatehouse/config.json5 --data-dir /var/lib/gatehouse
  RUST_LOG=gatehouse_service=debug,info gatehouse serve --log-format json")]
    Serve(serve::ServeArgs),
    /// Ask a person (through the gateway) whether a command may run; exit 0 yes, 20 no.
    #[command(after_help = "\
Examples:
  gatehouse request -- make deploy                # waits for the Control UI or chat
  gatehouse request --agent ops --timeout 300 -- ./deploy.sh prod
  gatehouse request --json -- 'rm -rf build' | jq .decision")]
    Request(client::CommandArgs),
    /// Run a command on the gateway host through policy and approval.
    #[command(after_help = "\
Examples:
  gatehouse run -- make deploy                    # asks a person if the policy says so
  gatehouse run --cwd /srv/app --timeout 600 -- ./migrate.sh")]
    Run(client::CommandArgs),
    /// Serve MCP on stdio: `run_command` and `check_command`, through the gateway.
    Mcp(mcp::McpArgs),
    /// Answer a Claude Code or Codex hook (`PreToolUse`, `PermissionRequest`) on stdin, asking
    /// the gateway; a person's decision is waited for.
    Hook(hook::HookArgs),
    /// List, inspect and answer approvals; edit allowlists.
    Approvals(approvals::ApprovalsArgs),
    /// List and revoke the allow-always grants of tool calls.
    Grants(grants::GrantsArgs),
    /// Check config, secrets and effective policy; warn about risky settings.
    #[command(after_help = "\
Examples:
  gatehouse doctor                                # the embedded default and its data directory
  gatehouse doctor --config /etc/gatehouse/config.json5 --data-dir /var/lib/gatehouse
  GATEHOUSE_TOKEN=$(cat ops.token) gatehouse doctor --config /etc/gatehouse/config.json5")]
    Doctor(doctor::DoctorArgs),
    /// Verify or read the hash-chained audit log.
    #[command(subcommand)]
    Audit(audit::AuditCommand),
    /// Write a starting config from a preset (Assistant, Permissive, Hardened, Custom).
    Setup(setup::SetupArgs),
    /// Show which gateway and identity the CLI uses and what the gateway has connected.
    Status(status::StatusArgs),
    /// Save a gateway's URL and token as a named context; list or switch contexts.
    Login(login::LoginArgs),
    /// Forget a saved context and its token.
    Logout(login::LogoutArgs),
    /// Print a shell completion script (bash, zsh or fish).
    Completions(completions::CompletionsArgs),
}

/// Answer a Claude Code or Codex hook (`PreToolUse`, `PermissionRequest`) on stdin, asking the
/// gateway; a person's decision is waited for.
#[derive(Debug, Parser)]
#[command(name = "gatehouse hook", version)]
struct HookCli {
    #[command(flatten)]
    args: hook::HookArgs,
}

/// The command line. `gatehouse hook …` is parsed on its own: an agent host runs it for every
/// tool call, and building every other subcommand's parser first was a fifth of that
/// process's instructions (docs/performance.md, "Agent-host hooks").
pub(crate) fn parse() -> Cli {
    let mut args = std::env::args_os();
    let program = args.next();
    let mut rest = args.peekable();
    if rest.peek().is_some_and(|first| first == "hook") {
        rest.next();
        let hook = HookCli::parse_from(std::iter::once("gatehouse hook".into()).chain(rest));
        return Cli {
            command: Command::Hook(hook.args),
        };
    }
    Cli::parse_from(program.into_iter().chain(rest))
}

/// Runs the chosen subcommand and returns the process exit status.
pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Check(args) => check::run(args),
        Command::Tools(args) => tools::run(args),
        Command::Version => {
            println!("gatehouse {}", env!("CARGO_PKG_VERSION"));
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve(args) => serve::run(args),
        Command::Request(args) => request::run(args),
        Command::Run(args) => run::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Hook(args) => hook::run(args),
        Command::Approvals(args) => approvals::run(args),
        Command::Grants(args) => grants::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Audit(command) => audit::run(command),
        Command::Setup(args) => setup::run(args),
        Command::Status(args) => status::run(args),
        Command::Login(args) => login::login(args),
        Command::Logout(args) => login::logout(args),
        Command::Completions(args) => completions::run(&args),
    }
}

/// Milliseconds since the Unix epoch by the system clock, the time the gateway's records use.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
        })
}
