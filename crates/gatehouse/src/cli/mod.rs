//! Command-line surface: one module per subcommand.

mod agent_ids;
mod approval_id;
mod approvals;
mod audit;
mod channels;
mod check;
mod check_tool;
mod client;
mod config;
mod doctor;
mod exec_sources;
mod grants;
mod layout;
mod logging;
mod request;
mod run;
mod serve;
mod tokens;
mod tools;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit status for usage and configuration errors, shared by every subcommand.
pub(crate) const EXIT_USAGE: u8 = 2;

/// Gatehouse: a self-hosted approval gateway for AI agents.
#[derive(Debug, Parser)]
#[command(name = "gatehouse", version, about)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Decide whether a shell command, or a tool call (`--tool`), may run without a person
    /// (exit 0 allow, 10 ask, 20 deny).
    Check(check::CheckArgs),
    /// Print an agent's effective tool set and why each other tool was removed.
    Tools(tools::ToolsArgs),
    /// Print the version and exit.
    Version,
    /// Run the gateway: JSON-RPC over WebSocket and HTTP, and the Control UI.
    Serve(serve::ServeArgs),
    /// Ask a person (through the gateway) whether a command may run; exit 0 yes, 20 no.
    Request(client::CommandArgs),
    /// Run a command on the gateway host through policy and approval.
    Run(client::CommandArgs),
    /// List, inspect and answer approvals; edit allowlists.
    Approvals(approvals::ApprovalsArgs),
    /// List and revoke the allow-always grants of tool calls.
    Grants(grants::GrantsArgs),
    /// Check config, secrets and effective policy; warn about risky settings.
    Doctor(doctor::DoctorArgs),
    /// Verify or read the hash-chained audit log.
    #[command(subcommand)]
    Audit(audit::AuditCommand),
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
        Command::Approvals(args) => approvals::run(args),
        Command::Grants(args) => grants::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Audit(command) => audit::run(command),
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
