//! `gatehouse run -- CMD…`: run a command on the gateway host through policy and approval, and
//! relay its output and exit status.

use std::io::Write as _;
use std::process::ExitCode;

use super::approval_id::call_naming_approval;
use super::client::CommandArgs;
use super::request::{EXIT_DENIED, NO_ROUTE_HINT};

/// Runs the subcommand: the exit status is the command's, or 20 when it was denied.
pub(crate) fn run(args: CommandArgs) -> anyhow::Result<ExitCode> {
    let mut params = args.params()?;
    if params.get("argv").is_some() {
        // `system.run` takes exactly one of the two; an argv must not go through a shell.
        params.as_object_mut().map(|p| p.remove("command"));
    }
    // Named while it waits, as `request` names it; a run the allowlist lets through asks
    // nobody, and the id goes unused.
    let answer = call_naming_approval(&args.server, "system.run", params)?;
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
        let reason = answer["reason"].as_str().unwrap_or("unknown");
        eprintln!(
            "gatehouse: denied ({reason}{}): {}",
            approval_named(reason, &answer),
            answer["detail"].as_str().unwrap_or_default()
        );
        if reason == "no-approval-route" {
            eprintln!("gatehouse: {NO_ROUTE_HINT}");
        }
        return Ok(ExitCode::from(EXIT_DENIED));
    }
    if answer["timedOut"] == true {
        eprintln!("gatehouse: the command timed out and was killed");
    }
    let code = answer["exitCode"].as_i64().unwrap_or(1);
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// `; approval ID` when a person was asked: the run then carries the approval's id, so the
/// denial can be looked up with `gatehouse approvals get`, as `request` names its approval.
/// A `policy` denial asked nobody, and its run id names no approval.
fn approval_named(reason: &str, answer: &serde_json::Value) -> String {
    match (reason, answer["runId"].as_str()) {
        ("policy", _) | (_, None) => String::new(),
        (_, Some(id)) => format!("; approval {id}"),
    }
}
