//! A conversation's worker: asks the state what to do next, does it (recording it in the
//! journal before and after every call), and sleeps until something is due. Every delivery
//! log line of the chat runtime is written here, so an operator finds them in one place.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::{Instant, sleep_until};

use super::Dispatcher;
use super::state::{Content, EditJob, Failed, Job, LaneId, Next, Phase, SendJob};
use crate::channel::Channel;
use crate::error::ChatError;
use crate::journal::{EntryKind, JournalError, Recorded, Transition};
use crate::render::{Card, render_fallback, render_origin_notice, render_prompt};
use crate::route::{MessageLocator, SendKey};
use crate::throttle::{Call, CallKind, Permit, Priority};
use crate::token::TokenStore;

/// Works on `lane` until it has nothing left.
pub(super) async fn run_lane<S: TokenStore + 'static>(
    dispatcher: Arc<Dispatcher<S>>,
    lane: LaneId,
) {
    loop {
        let digest_after = dispatcher.deliverer.settings(&lane.channel).digest_after;
        let (next, wake) = {
            let mut state = dispatcher.lock();
            let next = state.next_job(&lane, Instant::now(), digest_after);
            (next, state.lane_wake(&lane))
        };
        match next {
            Next::Exit => return,
            Next::Job(job) => perform(&dispatcher, *job).await,
            Next::Wait(until) => {
                let Some(wake) = wake else {
                    return;
                };
                match until {
                    Some(at) => {
                        tokio::select! {
                            () = sleep_until(at) => {}
                            () = wake.notified() => {}
                        }
                    }
                    None => wake.notified().await,
                }
            }
        }
    }
}

async fn perform<S: TokenStore + 'static>(dispatcher: &Arc<Dispatcher<S>>, job: Job) {
    match job {
        Job::Plan(entry) => {
            let planned = dispatcher.journal.plan(std::slice::from_ref(&entry)).await;
            let mut state = dispatcher.lock();
            match planned {
                Ok(()) => state.planned(&entry.key, Phase::Queued),
                Err(error) => {
                    journal_failed(&error);
                    state.planned(&entry.key, Phase::Unplanned);
                    state.retry_later(&entry.key, JOURNAL_RETRY, false);
                }
            }
        }
        Job::Skip(key) => {
            record(dispatcher, &key, Transition::Skipped).await;
            dispatcher.lock().remove(&key);
        }
        Job::Lose(key, reason) => {
            let route = dispatcher.lock().route_of(&key);
            tracing::warn!(
                route = %route.map(|r| r.to_string()).unwrap_or_default(),
                reason = %reason,
                "Chat message lost."
            );
            record(dispatcher, &key, Transition::Lost { reason: &reason }).await;
            dispatcher.lock().remove(&key);
        }
        Job::Send(send) => deliver(dispatcher, send).await,
        Job::Edit(edit) => finish(dispatcher, edit).await,
    }
}

/// How long a step waits after the journal refused to record it.
const JOURNAL_RETRY: Duration = Duration::from_secs(1);

fn journal_failed(error: &JournalError) {
    tracing::error!(error = %error, "Cannot record a chat delivery step; trying it again.");
}

/// Records `transition`, logging a failure: the step itself already happened.
async fn record<S: TokenStore + 'static>(
    dispatcher: &Dispatcher<S>,
    key: &SendKey,
    transition: Transition<'_>,
) {
    if let Err(error) = dispatcher
        .journal
        .record(key, transition, dispatcher.now_ms())
        .await
    {
        tracing::error!(error = %error, "Cannot record a chat delivery outcome.");
    }
}

async fn deliver<S: TokenStore + 'static>(dispatcher: &Arc<Dispatcher<S>>, job: SendJob) {
    let Some(channel) = dispatcher.channels.get(&job.lane.channel).cloned() else {
        let error = not_connected(&job.lane.channel);
        send_failed(dispatcher, &job, &error).await;
        return;
    };
    let call = Call {
        lane: Some(job.lane.conversation.clone()),
        group: job.group,
        kind: CallKind::Send,
        priority: job.priority,
    };
    let Some(permit) = wait_turn(dispatcher, &job.lane, call, &job.key, job.reconcile).await else {
        return;
    };
    if !dispatcher.lock().still_wanted(&job.key, job.reconcile) {
        return;
    }
    let sending = Transition::Sending {
        attempt: job.attempt,
    };
    match dispatcher
        .journal
        .record(&job.key, sending, dispatcher.now_ms())
        .await
    {
        Ok(Recorded::Applied) => {}
        Ok(Recorded::Refused) => {
            tracing::warn!(route = %job.route, "Chat message is no longer ours to send; dropped.");
            dispatcher.lock().remove(&job.key);
            return;
        }
        Err(error) => {
            journal_failed(&error);
            dispatcher
                .lock()
                .retry_later(&job.key, JOURNAL_RETRY, job.reconcile);
            return;
        }
    }
    let card = render(&job.content, dispatcher);
    let sent = match lookup(channel.as_ref(), &job).await {
        Some(found) => Ok(found),
        None => channel.send(&job.route, &card, &job.key).await,
    };
    drop(permit);
    let locator = match sent {
        Ok(locator) => locator,
        Err(error) => {
            dispatcher.deliverer.after_failure(
                &job.lane.channel,
                Some(&job.lane.conversation),
                CallKind::Send,
                &error,
            );
            send_failed(dispatcher, &job, &error).await;
            return;
        }
    };
    let (tokens, closed) = {
        let mut state = dispatcher.lock();
        state.delivered(&job.key, &locator, Instant::now());
        let closed = matches!(&job.content, Content::Fixed(_))
            && state.is_digest(&job.key)
            && state.digest_shown(&job.key, card.clone());
        (state.entry_tokens(&job.key), closed)
    };
    if !tokens.is_empty()
        && let Err(error) = dispatcher.tokens.bind_delivery(&tokens, &locator)
    {
        tracing::error!(error = %error, "Cannot bind a card's buttons to it.");
    }
    tracing::debug!(route = %job.route, attempt = job.attempt, reconciled = job.reconcile, "Chat message delivered.");
    record(
        dispatcher,
        &job.key,
        Transition::Delivered {
            attempt: job.attempt,
            locator: &locator,
        },
    )
    .await;
    if closed {
        record(dispatcher, &job.key, Transition::Finished).await;
        dispatcher.lock().remove(&job.key);
    }
}

/// Where an earlier attempt of `job` landed, on a platform that looks messages up rather than
/// sending under a key; `None` to send. A failed lookup sends too: not sending could leave an
/// approval without a card, sending may at worst show it twice.
async fn lookup(channel: &dyn Channel, job: &SendJob) -> Option<MessageLocator> {
    if !job.reconcile || channel.idempotent_sends() || !channel.finds_sent() {
        return None;
    }
    match channel.find_sent(&job.route, &job.key).await {
        Ok(found) => found,
        Err(error) => {
            tracing::warn!(route = %job.route, error = %error, "Cannot look for an earlier copy of a chat message; sending it again.");
            None
        }
    }
}

/// Waits for `call`'s turn, unless something more urgent comes up in its conversation
/// meanwhile (an edit of a card just settled, while a card waits): then the job is given back
/// and `None` returned, and the worker picks again.
async fn wait_turn<S: TokenStore + 'static>(
    dispatcher: &Arc<Dispatcher<S>>,
    lane: &LaneId,
    call: Call,
    key: &SendKey,
    reconcile: bool,
) -> Option<Permit> {
    let Some(wake) = dispatcher.lock().lane_wake(lane) else {
        return Some(dispatcher.deliverer.turn(&lane.channel, call).await);
    };
    let priority = call.priority;
    let turn = dispatcher.deliverer.turn(&lane.channel, call);
    tokio::pin!(turn);
    loop {
        tokio::select! {
            permit = &mut turn => return Some(permit),
            () = wake.notified() => {
                let mut state = dispatcher.lock();
                if state.more_urgent(lane, priority, Instant::now()) {
                    state.put_back(key, reconcile);
                    // Picked again at once by the worker's next look.
                    wake.notify_one();
                    return None;
                }
            }
        }
    }
}

async fn send_failed<S: TokenStore + 'static>(
    dispatcher: &Arc<Dispatcher<S>>,
    job: &SendJob,
    error: &ChatError,
) {
    let retry = dispatcher.deliverer.settings(&job.lane.channel).retry;
    let (failed, delay) = {
        let mut state = dispatcher.lock();
        let delay = retry.delay_after(error, state.failures_of(&job.key) + 1);
        let failed = state.failed(
            &job.key,
            error,
            delay,
            Instant::now(),
            job.reconcile,
            in_doubt(dispatcher, &job.lane.channel, error),
        );
        if let Failed::Fallback(key) = &failed
            && let Some(route) = state.route_of(key)
        {
            state.set_group(key, dispatcher.is_group(&route));
        }
        (failed, delay)
    };
    tracing::warn!(
        route = %job.route,
        attempt = job.attempt,
        retry_in_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
        error = %error,
        "Chat message not delivered yet."
    );
    record(
        dispatcher,
        &job.key,
        Transition::SendFailed {
            attempt: job.attempt,
            error,
            retry_at_ms: dispatcher.now_ms() + duration_ms(delay),
        },
    )
    .await;
    if let Failed::Fallback(key) = failed {
        tracing::warn!(route = %job.route, "No prompt could be delivered; sending the /approve commands to the origin.");
        let mut state = dispatcher.lock();
        dispatcher.wake(&mut state, &key);
    }
}

async fn finish<S: TokenStore + 'static>(dispatcher: &Arc<Dispatcher<S>>, job: EditJob) {
    let Some(channel) = dispatcher.channels.get(&job.lane.channel).cloned() else {
        let error = not_connected(&job.lane.channel);
        finish_failed(dispatcher, &job, &error).await;
        return;
    };
    let kind = if job.delete {
        CallKind::Delete
    } else {
        CallKind::Update
    };
    let call = Call {
        lane: Some(job.lane.conversation.clone()),
        group: job.group,
        kind,
        priority: Priority::Edit,
    };
    let Some(permit) = wait_turn(dispatcher, &job.lane, call, &job.key, false).await else {
        return;
    };
    let done = edit(channel.as_ref(), &job).await;
    drop(permit);
    if let Err(error) = done {
        dispatcher.deliverer.after_failure(
            &job.lane.channel,
            Some(&job.lane.conversation),
            kind,
            &error,
        );
        finish_failed(dispatcher, &job, &error).await;
        return;
    }
    let over = !job.digest || dispatcher.lock().digest_shown(&job.key, job.card.clone());
    tracing::debug!(channel = %job.lane.channel, chat_id = %job.locator.chat_id, "Chat message edited.");
    if over {
        record(dispatcher, &job.key, Transition::Finished).await;
        dispatcher.lock().remove(&job.key);
    }
}

async fn edit(channel: &dyn Channel, job: &EditJob) -> Result<(), ChatError> {
    if job.delete {
        channel.delete(&job.locator).await
    } else {
        channel.update(&job.locator, &job.card).await
    }
}

async fn finish_failed<S: TokenStore + 'static>(
    dispatcher: &Arc<Dispatcher<S>>,
    job: &EditJob,
    error: &ChatError,
) {
    let retry = dispatcher.deliverer.settings(&job.lane.channel).retry;
    let delay = {
        let mut state = dispatcher.lock();
        let delay = retry.delay_after(error, state.failures_of(&job.key) + 1);
        state.failed(&job.key, error, delay, Instant::now(), false, false);
        delay
    };
    tracing::warn!(
        channel = %job.lane.channel,
        chat_id = %job.locator.chat_id,
        retry_in_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
        error = %error,
        "Chat message not edited yet."
    );
    record(
        dispatcher,
        &job.key,
        Transition::FinishFailed {
            error,
            retry_at_ms: dispatcher.now_ms() + duration_ms(delay),
        },
    )
    .await;
}

/// The message a send shows, rendered now.
fn render<S: TokenStore + 'static>(content: &Content, dispatcher: &Dispatcher<S>) -> Card {
    let max = dispatcher.max_command_chars;
    match content {
        Content::Fixed(card) => card.clone(),
        Content::Approval { view, kind, tokens } => match kind {
            EntryKind::Card => {
                render_prompt(view, dispatcher.now_ms(), max).with_buttons(tokens.clone())
            }
            EntryKind::OriginNotice => render_origin_notice(view),
            EntryKind::Fallback => render_fallback(view, dispatcher.now_ms(), max),
            EntryKind::TextPrompt | EntryKind::Digest => {
                render_prompt(view, dispatcher.now_ms(), max)
            }
        },
    }
}

/// Whether a failed send may still have landed where the platform can find it again by its key
/// (a transient failure may be a lost answer; a 429 or a refusal is not): then it is sent again
/// under its key even once its approval settled, so the copy is found and edited.
fn in_doubt<S: TokenStore + 'static>(
    dispatcher: &Dispatcher<S>,
    channel: &str,
    error: &ChatError,
) -> bool {
    matches!(error, ChatError::Transient { .. })
        && dispatcher
            .channels
            .get(channel)
            .is_some_and(|channel| super::finds_earlier_attempts(channel.as_ref()))
}

fn not_connected(channel: &str) -> ChatError {
    ChatError::Permanent {
        channel: channel.to_owned(),
        reason: "no such channel is connected".to_owned(),
    }
}

fn duration_ms(delay: Duration) -> u64 {
    u64::try_from(delay.as_millis()).unwrap_or(u64::MAX)
}
