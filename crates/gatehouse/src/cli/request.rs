//! `gatehouse request -- CMD…`: ask a person whether a command may run, and wait for the answer.
//! Exit 0 when it may run (a person allowed it, or `askFallback` did), 20 when it may not.

use std::process::ExitCode;
use std::time::Duration;

use gatehouse_store::approvals_db::mint_approval_id;
use serde_json::{Value, json};

use super::client::{CommandArgs, ServerArgs, block_on, refused_with};

/// Exit status when the command may not run; the same as `gatehouse check`'s deny.
pub(crate) const EXIT_DENIED: u8 = 20;

/// The first and the longest pause between two looks for the approval while the request waits.
const FIRST_LOOK: Duration = Duration::from_millis(50);
const LONGEST_PAUSE: Duration = Duration::from_secs(1);

/// Ids minted before giving up on `id_in_use`: each clash has odds of stored approvals in 2^32.
const MINT_ATTEMPTS: u32 = 3;

/// Runs the subcommand. The wait may last until the approval expires, so the person at the
/// terminal is told which approval to answer (or look for) as soon as the gateway holds it,
/// and only then: a request refused outright (no token, `forbidden`, a full pending cap)
/// names no approval that never existed. The id is chosen here, as the gateway mints its own
/// (so the store indexes it as cheaply), to be looked for while the request waits.
pub(crate) fn run(args: CommandArgs) -> anyhow::Result<ExitCode> {
    let params = args.params()?;
    let server = &args.server;
    let answer = block_on(async {
        let mut attempt = 1;
        loop {
            let id = mint_approval_id(super::now_ms()).to_string();
            match request_as(server, params.clone(), &id).await {
                // The gateway refuses an id whose short form another approval already shows
                // (a chance of stored approvals in 2^32); nothing was created, so mint again.
                Err(error) if refused_with(&error, "id_in_use") && attempt < MINT_ATTEMPTS => {
                    attempt += 1;
                }
                answer => return answer,
            }
        }
    })?;
    let may_run = may_run(&answer);
    if args.json {
        println!("{answer}");
    } else {
        println!("{}", summary(&answer));
    }
    Ok(if may_run {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_DENIED)
    })
}

/// Asks for approval `id` of `params`, naming it on stderr once the gateway holds it.
async fn request_as(server: &ServerArgs, mut params: Value, id: &str) -> anyhow::Result<Value> {
    params["id"] = json!(id);
    let request = server.call_async("exec.approval.request", params);
    let mut request = std::pin::pin!(request);
    tokio::select! {
        answer = &mut request => return answer,
        () = announce_once_held(server, id) => {}
    }
    request.await
}

/// Looks for approval `id` (the requester may read its own) until the gateway holds it, then
/// names it on stderr. Any answer but `not_found` ends the looking without a word: the request
/// itself reports what is wrong.
async fn announce_once_held(server: &ServerArgs, id: &str) {
    let mut pause = FIRST_LOOK;
    loop {
        tokio::time::sleep(pause).await;
        match server
            .call_async("exec.approval.get", json!({"id": id}))
            .await
        {
            Ok(_) => {
                eprintln!("gatehouse: waiting for a decision on approval {id}");
                return;
            }
            Err(error) if refused_with(&error, "not_found") => {
                pause = (pause * 2).min(LONGEST_PAUSE);
            }
            Err(_) => return,
        }
    }
}

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
