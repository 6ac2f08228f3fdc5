//! Asking the gateway about one translated call: `tools.call.check`, then, when the policy
//! wants a person, a blocking `tools.call.request` that waits for them — all within the
//! integration's approval timeout, so the host hears an answer before its own hook timeout.

use std::time::Duration;

use gatehouse_hooks::{AfterCheck, Answer, HookToolCall, IntegrationSettings};
use tokio::time::Instant;

use crate::cli::client::{Refusal, ServerArgs};

/// How long past the approval timeout the hook waits for the gateway's own answer to a
/// request (the gateway expires the approval at the timeout and then answers deny).
const ANSWER_MARGIN: Duration = Duration::from_secs(5);

/// The answer for `call`: the policy's, or a person's; every failure is a deny (or the host's
/// prompt when the gateway is unreachable and the settings say `ask`).
pub(super) async fn gateway(
    server: &ServerArgs,
    call: &HookToolCall,
    settings: &IntegrationSettings,
) -> Answer {
    let deadline = Instant::now() + settings.approval_timeout + ANSWER_MARGIN;
    match tokio::time::timeout_at(deadline, decide(server, call, settings)).await {
        Ok(answer) => answer,
        Err(_) => Answer::Deny {
            reason: format!(
                "Gatehouse gave no answer within {} s, so this call is refused",
                (settings.approval_timeout + ANSWER_MARGIN).as_secs()
            ),
        },
    }
}

async fn decide(
    server: &ServerArgs,
    call: &HookToolCall,
    settings: &IntegrationSettings,
) -> Answer {
    let started = Instant::now();
    let target = match server.target() {
        Ok(target) => target,
        Err(error) => return failed(&error, settings),
    };
    let check = match target.call("tools.call.check", call.check_params()).await {
        Ok(check) => check,
        Err(error) => return failed(&error, settings),
    };
    match gatehouse_hooks::after_check(&check) {
        AfterCheck::Answer(answer) => answer,
        AfterCheck::AskPerson => {
            let left = settings.approval_timeout.saturating_sub(started.elapsed());
            if left < Duration::from_secs(1) {
                return Answer::Deny {
                    reason: "Gatehouse wants a person to decide, and no time is left within \
                             the approval timeout, so this call is refused"
                        .to_owned(),
                };
            }
            let millis = u64::try_from(left.as_millis()).unwrap_or(u64::MAX);
            match target
                .call("tools.call.request", call.request_params(millis))
                .await
            {
                Ok(result) => gatehouse_hooks::after_request(&result, left.as_secs()),
                Err(error) => failed(&error, settings),
            }
        }
    }
}

/// A call that failed: the gateway's refusal is a deny naming it; anything else (no token, no
/// connection, an answer that is not the gateway's) means no decision could be had.
fn failed(error: &anyhow::Error, settings: &IntegrationSettings) -> Answer {
    if let Some(refusal) = error.downcast_ref::<Refusal>() {
        return Answer::Deny {
            reason: format!("the Gatehouse gateway refused to judge this call: {refusal}"),
        };
    }
    Answer::unreachable(settings.on_unreachable, &format!("{error:#}"))
}
