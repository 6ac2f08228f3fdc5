//! Socket Mode: slack-morphism's listener with callbacks that only hand events to the
//! [`Intake`] and return, because the listener acks an envelope after its callback returns and
//! Slack wants the ack within 3 seconds. Reconnects (and Slack's redelivery of unacked
//! envelopes) are the listener's job.

use std::sync::Arc;

use gatehouse_chat::ChatError;
use slack_morphism::prelude::*;
use tokio::sync::mpsc;

use crate::classify::classify;
use crate::encode::answer_content;
use crate::intake::Intake;

/// Listens until `closed` resolves (the core dropped its queue), then shuts the listener down.
pub(crate) async fn listen(
    client: Arc<SlackHyperClient>,
    app_token: &SlackApiToken,
    intake: Arc<Intake>,
    connections: u32,
    queue: &mpsc::Sender<gatehouse_chat::Inbound>,
) -> Result<(), ChatError> {
    let environment =
        Arc::new(SlackClientEventsListenerEnvironment::new(client).with_user_state(intake));
    let callbacks = SlackSocketModeListenerCallbacks::new()
        .with_interaction_events(on_interaction)
        .with_push_events(on_push)
        .with_command_events(on_command);
    let config = SlackClientSocketModeConfig::new().with_max_connections_count(connections);
    let listener = SlackClientSocketModeListener::new(&config, environment, callbacks);
    listener
        .listen_for(app_token)
        .await
        .map_err(|error| classify(&error))?;
    listener.start().await;
    tracing::info!(channel = "slack", "Slack Socket Mode connected.");
    queue.closed().await;
    listener.shutdown().await;
    Ok(())
}

async fn intake(state: &SlackClientEventsUserState) -> Option<Arc<Intake>> {
    state.read().await.get_user_state::<Arc<Intake>>().cloned()
}

async fn on_interaction(
    event: SlackInteractionEvent,
    _client: Arc<SlackHyperClient>,
    state: SlackClientEventsUserState,
) -> UserCallbackResult<()> {
    if let Some(intake) = intake(&state).await {
        intake.interaction(&event);
    }
    Ok(())
}

async fn on_push(
    event: SlackPushEventCallback,
    _client: Arc<SlackHyperClient>,
    state: SlackClientEventsUserState,
) -> UserCallbackResult<()> {
    if let Some(intake) = intake(&state).await {
        intake.event(&event);
    }
    Ok(())
}

/// Answers in the ack payload when the core answers in time; otherwise acks empty and the core's
/// answer goes to the `response_url`.
async fn on_command(
    event: SlackCommandEvent,
    _client: Arc<SlackHyperClient>,
    state: SlackClientEventsUserState,
) -> UserCallbackResult<SlackCommandEventResponse> {
    let answer = match intake(&state).await {
        Some(intake) => intake.command(&event).await,
        None => None,
    };
    // Without an answer the ack carries an empty payload, the Socket Mode form of an empty 200.
    Ok(match answer {
        Some(text) => SlackCommandEventResponse::new(answer_content(&text))
            .with_response_type(SlackMessageResponseType::Ephemeral),
        None => SlackCommandEventResponse::new(SlackMessageContent::new()),
    })
}
