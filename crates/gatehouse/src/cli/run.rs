//! `gatehouse run -- CMD…`: run a command on the gateway host through policy and approval, and
//! relay its output and exit status.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::json;

use super::client::{ServerArgs, command_params};
use super::request::EXIT_DENIED;

/// Flags of `gatehouse run`.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Seconds the command may run before it is killed [default: the server's].
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    /// Agent id the run is made for.
    #[arg(long, default_value = "main")]
    agent: String,
    /// Session key shown to approvers.
    #[arg(long, default_value = "cli")]
    session: String,
    /// Working directory on the gateway host [default: the current one].
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print the server's answer as JSON.
    #[arg(long)]
    json: bool,
    /// One argument: a shell string. Several: an argv run without a shell.
    #[arg(value_name = "COMMAND", required = true, last = true)]
    command: Vec<String>,
}

/// Runs the subcommand: the exit status is the command's, or 20 when it was denied.
pub(crate) fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let cwd = match args.cwd {
        Some(cwd) => cwd,
        None => std::env::current_dir().context("cannot determine the current directory")?,
    };
    let mut params = command_params(&args.command);
    if params.get("argv").is_some() {
        // `system.run` takes exactly one of the two; an argv must not go through a shell.
        params.as_object_mut().map(|p| p.remove("command"));
    }
    params["cwd"] = json!(cwd);
    params["agentId"] = json!(args.agent);
    params["sessionKey"] = json!(args.session);
    if let Some(seconds) = args.timeout {
        params["timeoutMs"] = json!(seconds.saturating_mul(1000));
    }
    let answer = args.server.call("system.run", params)?;
    if args.json {
        println!("{answer}");
    } else {
        std::io::stdout().write_all(answer["stdout"].as_str().unwrap_or_default().as_bytes())?;
        std::io::stderr().write_all(answer["stderr"].as_str().unwrap_or_default().as_bytes())?;
        for (stream, key) in [("stdout", "stdoutTruncated"), ("stderr", "stderrTruncated")] {
            if answer[key] == true {
                eprintln!("gatehouse: {stream} was truncated by the gateway");
            }
        }
    }
    if answer["status"] == "denied" {
        eprintln!(
            "gatehouse: denied ({}): {}",
            answer["reason"].as_str().unwrap_or("unknown"),
            answer["detail"].as_str().unwrap_or_default()
        );
        return Ok(ExitCode::from(EXIT_DENIED));
    }
    if answer["timedOut"] == true {
        eprintln!("gatehouse: the command timed out and was killed");
    }
    let code = answer["exitCode"].as_i64().unwrap_or(1);
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}
