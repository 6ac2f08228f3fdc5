//! `gatehouse approvals …`: list, inspect and answer approvals, and edit per-agent allowlists in
//! the server's `exec-approvals.json` (read with its hash, written back with `baseHash`, so a
//! concurrent edit is reported instead of lost).

mod show;

use std::process::ExitCode;

use anyhow::bail;
use clap::Subcommand;
use serde_json::{Value, json};

use gatehouse_chat::sanitize::{make_visible, one_line};
use gatehouse_policy::exec::ignored_allowlist_entries;
use gatehouse_store::approvals_file::AllowlistEntry;

use super::client::{ServerArgs, at_least_one, refused_with};

/// Flags of `gatehouse approvals`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  gatehouse approvals list --state pending
  gatehouse approvals get 3f0c1a2b
  gatehouse approvals resolve 3f0c1a2b allow-once
  gatehouse approvals allowlist add --agent main git     # resolved on the gateway host

The gateway is found as for every client command (`gatehouse login --help`).")]
pub(crate) struct ApprovalsArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Print the server's answers as JSON.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: ApprovalsCommand,
}

#[derive(Debug, Subcommand)]
enum ApprovalsCommand {
    /// List approvals, oldest first (`--newest-first` for the latest).
    #[command(after_help = "\
Examples:
  gatehouse approvals list --state pending
  gatehouse approvals list --newest-first --limit 20
  gatehouse approvals list --agent ops --json | jq '.approvals[].id'")]
    List {
        /// Only this state: pending, allowed, denied, expired, cancelled.
        #[arg(long)]
        state: Option<String>,
        /// Only this agent.
        #[arg(long)]
        agent: Option<String>,
        /// The latest approvals, newest first, instead of the earliest.
        #[arg(long)]
        newest_first: bool,
        /// At most this many (the gateway caps it at 1,000).
        #[arg(long, default_value_t = 100, value_parser = at_least_one)]
        limit: u64,
    },
    /// Show one approval by id or unique prefix.
    #[command(
        after_help = "Examples:\n  gatehouse approvals get 3f0c1a2b\n  gatehouse approvals get --json 3f0c1a2b"
    )]
    Get {
        /// Approval id or prefix.
        id: String,
    },
    /// Answer an approval: allow-once, allow-always or deny.
    #[command(after_help = "\
Examples:
  gatehouse approvals resolve 3f0c1a2b allow-once
  gatehouse approvals resolve 3f0c1a2b deny --reason 'not during the freeze'")]
    Resolve {
        /// Approval id or unique prefix.
        id: String,
        /// allow-once, allow-always or deny.
        decision: String,
        /// Why; stored with the decision, audited and shown to other operators.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Per-agent allowlists in exec-approvals.json.
    #[command(subcommand)]
    Allowlist(AllowlistCommand),
}

#[derive(Debug, Subcommand)]
enum AllowlistCommand {
    /// Show an agent's allowlist with when each entry last let a command run.
    #[command(
        after_help = "Examples:\n  gatehouse approvals allowlist list --agent main\n  gatehouse approvals allowlist list --json"
    )]
    List {
        /// Agent id.
        #[arg(long, default_value = "main")]
        agent: String,
    },
    /// Add a pattern (a resolved-path glob) to an agent's allowlist; a bare program name is
    /// resolved on the gateway host's PATH first.
    #[command(after_help = "\
Examples:
  gatehouse approvals allowlist add git                  # adds git's path on the gateway host
  gatehouse approvals allowlist add --agent ops '/opt/tools/bin/*'")]
    Add {
        /// Agent id.
        #[arg(long, default_value = "main")]
        agent: String,
        /// The pattern (an absolute path or glob), or a program name to resolve.
        pattern: String,
    },
    /// Remove an entry by id or pattern.
    #[command(
        after_help = "Examples:\n  gatehouse approvals allowlist remove --agent main /usr/local/bin/git"
    )]
    Remove {
        /// Agent id.
        #[arg(long, default_value = "main")]
        agent: String,
        /// Entry id or exact pattern.
        entry: String,
    },
}

/// Runs the subcommand. Without `--json` the answers are shown for people, with every
/// agent-supplied text made visible (an escape sequence in a command must not restyle the
/// operator's terminal). A `resolve` that did not apply because someone answered first exits 1
/// and says who and what, within the grace period or after it, so scripts notice.
pub(crate) fn run(args: ApprovalsArgs) -> anyhow::Result<ExitCode> {
    let server = &args.server;
    let answer = match args.command {
        ApprovalsCommand::List {
            state,
            agent,
            newest_first,
            limit,
        } => {
            let order = if newest_first {
                "newest-first"
            } else {
                "oldest-first"
            };
            let answer = server.call(
                "exec.approval.list",
                json!({"state": state, "agentId": agent, "limit": limit, "order": order}),
            )?;
            if !args.json {
                let approvals = answer["approvals"].as_array().cloned().unwrap_or_default();
                if approvals.is_empty() {
                    eprintln!("no approvals match");
                } else {
                    print!("{}", show::approvals_table(&approvals, super::now_ms()));
                }
                return Ok(ExitCode::SUCCESS);
            }
            answer
        }
        ApprovalsCommand::Get { id } => {
            let answer = server.call("exec.approval.get", json!({"id": id}))?;
            if !args.json {
                print!("{}", show::approval(&answer));
                return Ok(ExitCode::SUCCESS);
            }
            answer
        }
        ApprovalsCommand::Resolve {
            id,
            decision,
            reason,
        } => {
            let answer = match server.call(
                "exec.approval.resolve",
                json!({"id": id, "decision": decision, "reason": reason}),
            ) {
                Err(error) if refused_with(&error, "already_resolved") => {
                    decided_earlier(server, &id)?
                }
                answered => answered?,
            };
            let applied = answer["applied"] == true;
            if args.json {
                println!("{}", serde_json::to_string_pretty(&answer)?);
            } else {
                println!("{}", show::resolution(&answer));
            }
            return Ok(if applied {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            });
        }
        ApprovalsCommand::Allowlist(command) => {
            let changed = allowlist(server, command)?;
            if !args.json {
                print!("{}", show::allowlist(&changed, super::now_ms()));
                return Ok(ExitCode::SUCCESS);
            }
            changed
        }
    };
    println!("{}", serde_json::to_string_pretty(&answer)?);
    Ok(ExitCode::SUCCESS)
}

/// What a `resolve` that came after the grace period gets told, in the shape of the answer one
/// within it gets (`applied: false` and the winner): the gateway refuses it with
/// `already_resolved`, and the stored record says who decided what.
fn decided_earlier(server: &ServerArgs, key: &str) -> anyhow::Result<Value> {
    let record = server.call("exec.approval.get", json!({"id": key}))?;
    Ok(json!({
        "id": record["id"],
        "applied": false,
        "state": record["state"],
        "decision": record["decision"],
        "resolvedBy": record["resolvedBy"],
        "allowlistAdded": [],
    }))
}

/// Reads the file, changes one agent's allowlist, and writes it back based on the hash read.
fn allowlist(server: &ServerArgs, command: AllowlistCommand) -> anyhow::Result<Value> {
    let command = match command {
        AllowlistCommand::Add { agent, pattern } => {
            let pattern = resolved_pattern(server, &agent, pattern.trim())?;
            AllowlistCommand::Add { agent, pattern }
        }
        other => other,
    };
    let read = server.call("exec.approvals.get", json!({}))?;
    let agent = match &command {
        AllowlistCommand::List { agent }
        | AllowlistCommand::Add { agent, .. }
        | AllowlistCommand::Remove { agent, .. } => agent.clone(),
    };
    // Indexed, not a JSON pointer: an agent id may hold `/` or `~`.
    let current = &read["file"]["agents"][&agent]["allowlist"];
    let mut entries = current.as_array().cloned().unwrap_or_default();
    match command {
        AllowlistCommand::List { .. } => return Ok(json!({"agent": agent, "allowlist": entries})),
        AllowlistCommand::Add { pattern, .. } => {
            let pattern = pattern.trim();
            // The rule the gateway's own adds follow (`AllowlistEntry::same_rule`): a pattern
            // already there without an argument pattern is not added twice.
            let existing = entries.iter().find_map(|item| {
                serde_json::from_value::<AllowlistEntry>(item.clone())
                    .ok()
                    .filter(|known| known.same_rule(pattern, None))
            });
            if let Some(existing) = existing {
                eprintln!(
                    "agent `{}` already has `{}` (entry {}){}; nothing changed",
                    one_line(&agent, 200),
                    one_line(&existing.pattern, 200),
                    one_line(existing.id.as_deref().unwrap_or("without an id"), 80),
                    if existing.pattern.trim() == pattern {
                        String::new()
                    } else {
                        format!(", the same rule as `{}`", one_line(pattern, 200))
                    }
                );
                return Ok(json!({"agent": agent, "allowlist": entries}));
            }
            entries.push(json!({"pattern": pattern}));
        }
        AllowlistCommand::Remove { entry, .. } => {
            let before = entries.len();
            entries
                .retain(|item| item["id"] != entry.as_str() && item["pattern"] != entry.as_str());
            if entries.len() == before {
                bail!("agent `{agent}` has no allowlist entry with id or pattern {entry:?}");
            }
        }
    }
    let mut file = read["file"].clone();
    if file["agents"].is_null() {
        file["agents"] = json!({});
    }
    if file["agents"][&agent].is_null() {
        file["agents"][&agent] = json!({});
    }
    file["agents"][&agent]["allowlist"] = Value::Array(entries);
    let written = server.call(
        "exec.approvals.set",
        json!({"file": file, "baseHash": read["hash"]}),
    )?;
    Ok(json!({"agent": agent, "allowlist": written["file"]["agents"][&agent]["allowlist"]}))
}

/// The pattern to add: `pattern` itself, or for a bare program name (which the policy would
/// ignore) the path it resolves to on the gateway host, found with `exec.policy.check` as the
/// gateway resolves an agent's command, so the entry names the program this host runs. A name
/// the gateway cannot resolve, or any other pattern the policy would skip, is refused.
fn resolved_pattern(server: &ServerArgs, agent: &str, pattern: &str) -> anyhow::Result<String> {
    if !is_program_name(pattern) {
        refuse_ignored_pattern(pattern)?;
        return Ok(pattern.to_owned());
    }
    let check = json!({"command": pattern, "cwd": "/", "agentId": agent});
    let resolved = server
        .call("exec.policy.check", check)
        .ok()
        .and_then(|answer| {
            answer["segments"][0]["resolvedPath"]
                .as_str()
                .map(str::to_owned)
        });
    match resolved {
        Some(path) => {
            eprintln!(
                "gatehouse: `{}` resolves to {} on the gateway host; adding that",
                one_line(pattern, 200),
                one_line(&path, 300)
            );
            Ok(path)
        }
        None => {
            refuse_ignored_pattern(pattern)?;
            Ok(pattern.to_owned())
        }
    }
}

/// A word a shell would run as a program found on `PATH`: no slash, no glob, no quoting.
fn is_program_name(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-'))
        && !word.starts_with('-')
}

/// Refuses a pattern the policy would skip (a bare name such as `git`, a bad glob), with the
/// policy's own reason: added, it would sit in the file allowing nothing, and only `doctor`
/// would say so later. `~` expands against the gateway's `HOME`, which is not known here; a
/// stand-in does, since where it points never decides whether an entry is used.
fn refuse_ignored_pattern(pattern: &str) -> anyhow::Result<()> {
    let entry = gatehouse_policy::exec::AllowlistEntry {
        pattern: pattern.to_owned(),
        arg_pattern: None,
    };
    let stand_in_home = std::path::Path::new("/home/gatehouse");
    match ignored_allowlist_entries(&[entry], Some(stand_in_home)).first() {
        Some(reason) if pattern.contains('/') => bail!("not added: {}", make_visible(reason)),
        Some(reason) => bail!(
            "not added: {} (`command -v {}` on the gateway host prints it)",
            make_visible(reason),
            one_line(pattern, 200)
        ),
        None => Ok(()),
    }
}
