//! `gatehouse grants …`: the allow-always grants of tool calls, listed and revoked through the
//! gateway (`tools.grants.list`, `tools.grants.revoke`). A revoked grant covers no later call.

use std::process::ExitCode;

use clap::Subcommand;
use serde_json::{Value, json};

use gatehouse_chat::render::utc_timestamp;
use gatehouse_chat::sanitize::one_line;

use super::client::ServerArgs;

/// Flags of `gatehouse grants`.
#[derive(Debug, clap::Args)]
pub(crate) struct GrantsArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Print the server's answers as JSON.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: GrantsCommand,
}

#[derive(Debug, Subcommand)]
enum GrantsCommand {
    /// List the grants, oldest first.
    List {
        /// Only this agent's.
        #[arg(long)]
        agent: Option<String>,
    },
    /// Revoke a grant by id or unique prefix (the id of the approval that made it).
    Revoke {
        /// Grant id or prefix.
        id: String,
    },
}

/// Runs the subcommand; without `--json`, one line per grant, every value made visible.
pub(crate) fn run(args: GrantsArgs) -> anyhow::Result<ExitCode> {
    let server = &args.server;
    let answer = match &args.command {
        GrantsCommand::List { agent } => {
            server.call("tools.grants.list", json!({"agentId": agent}))?
        }
        GrantsCommand::Revoke { id } => server.call("tools.grants.revoke", json!({"id": id}))?,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&answer)?);
        return Ok(ExitCode::SUCCESS);
    }
    match args.command {
        GrantsCommand::List { .. } => {
            let grants = answer["grants"].as_array().cloned().unwrap_or_default();
            if grants.is_empty() {
                eprintln!("no grants");
            }
            for grant in &grants {
                println!("{}", grant_line(grant));
            }
        }
        GrantsCommand::Revoke { .. } => {
            println!("revoked {}", grant_line(&answer["revoked"]));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `3f0c1a2b  main  write  paths /ws/notes.md  by alice  2026-11-21 06:40:00 UTC`.
fn grant_line(grant: &Value) -> String {
    let text = |key: &str| one_line(grant[key].as_str().unwrap_or("?"), 200);
    let values: Vec<String> = grant["values"]
        .as_array()
        .map(|values| {
            values
                .iter()
                .map(|v| one_line(v.as_str().unwrap_or("?"), 200))
                .collect()
        })
        .unwrap_or_default();
    let id = text("id");
    let short: String = id.chars().take(8).collect();
    let by = grant["grantedBy"]
        .as_str()
        .map(|who| format!("  by {}", one_line(who, 64)))
        .unwrap_or_default();
    let at = grant["createdAtMs"]
        .as_u64()
        .map(|ms| format!("  {}", utc_timestamp(ms / 1000)))
        .unwrap_or_default();
    format!(
        "{short}  {}  {}  {} {}{by}{at}",
        text("agentId"),
        text("tool"),
        text("scope"),
        values.join(", ")
    )
}
