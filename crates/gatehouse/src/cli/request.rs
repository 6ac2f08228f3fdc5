//! `gatehouse request -- CMD…`: ask a person whether a command may run, and wait for the answer.
//! Exit 0 when it may run (a person allowed it, or `askFallback` did), 20 when it may not.

use std::process::ExitCode;

use serde_json::Value;

use super::approval_id::call_naming_approval;
use super::client::CommandArgs;

/// Exit status when the command may not run; the same as `gatehouse check`'s deny.
pub(crate) const EXIT_DENIED: u8 = 20;

/// Runs the subcommand; the approval is named on stderr once the gateway holds it (see
/// [`call_naming_approval`]).
pub(crate) fn run(args: CommandArgs) -> anyhow::Result<ExitCode> {
    let params = args.params()?;
    let answer = call_naming_approval(&args.server, "exec.approval.request", params)?;
    let may_run = may_run(&answer);
    if args.json {
        println!("{answer}");
    } else {
        println!("{}", summary(&answer));
    }
    if answer["reason"] == NO_APPROVAL_ROUTE {
        eprintln!("gatehouse: {NO_ROUTE_HINT}");
    }
    Ok(if may_run {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_DENIED)
    })
}

/// The reason of an approval nobody could be asked about.
const NO_APPROVAL_ROUTE: &str = "no-approval-route";

/// What to do when nobody could be asked: said on stderr, as `serve` logs it.
pub(crate) const NO_ROUTE_HINT: &str = "nobody could be asked: no operator client (such as the \
    Control UI) was connected and no chat channel routes this request; open the Control UI (the \
    login URL `gatehouse serve` printed) or configure a chat channel (docs/channels/), then ask \
    again";

/// Allowed by a person, or by `askFallback` when nobody answered.
fn may_run(answer: &Value) -> bool {
    match answer["decision"].as_str() {
        Some("allow-once" | "allow-always") => true,
        Some(_) => false,
        None => answer["fallback"]["approved"].as_bool() == Some(true),
    }
}

fn summary(answer: &Value) -> String {
    let id = answer["id"].as_str().unwrap_or("?");
    match (answer["decision"].as_str(), answer["reason"].as_str()) {
        (Some(decision), _) => {
            let by = answer["resolvedBy"].as_str().unwrap_or("someone");
            format!("{decision} (by {by}; approval {id})")
        }
        (None, reason) => {
            let fallback = answer["fallback"]["askFallback"].as_str().unwrap_or("deny");
            let verdict = if may_run(answer) { "allowed" } else { "denied" };
            format!(
                "{} ({}): askFallback {fallback} {verdict} it (approval {id})",
                answer["state"].as_str().unwrap_or("settled"),
                reason.unwrap_or("no reason"),
            )
        }
    }
}
