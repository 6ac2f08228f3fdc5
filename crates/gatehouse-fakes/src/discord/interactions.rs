//! Interaction responses and follow-ups: the 3-second window, one acknowledgement per
//! interaction, `@original` and follow-up messages through the interaction webhook.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::messages::{Channels, Snowflakes, validate};
use super::reply::{DcError, Reply, snowflake};
use super::{APP_ID, DcState};

/// Discord drops an interaction that is not acknowledged within 3 seconds.
const RESPONSE_WINDOW: Duration = Duration::from_secs(3);
/// Interaction tokens (and so follow-ups) live 15 minutes.
const TOKEN_LIFETIME: Duration = Duration::from_secs(15 * 60);
/// Interaction types.
const PING: u64 = 1;
const AUTOCOMPLETE: u64 = 4;
const MODAL_SUBMIT: u64 = 5;
const COMPONENT: u64 = 3;

/// Interactions delivered to the bot, by id and by token.
#[derive(Debug, Default)]
pub(crate) struct Interactions {
    by_id: HashMap<u64, Pending>,
    by_token: HashMap<String, u64>,
}

#[derive(Debug)]
struct Pending {
    token: String,
    created: Instant,
    kind: u64,
    channel_id: u64,
    /// The message a component interaction came from.
    message_id: Option<u64>,
    acknowledged: bool,
    deferred: bool,
    /// The message `@original` designates.
    original: Option<u64>,
    followups: HashSet<u64>,
}

/// What an injected interaction is about, for registration.
#[derive(Debug)]
pub(crate) struct Delivered {
    pub(crate) id: u64,
    pub(crate) token: String,
    pub(crate) kind: u64,
    pub(crate) channel_id: u64,
    pub(crate) message_id: Option<u64>,
}

impl Interactions {
    /// Makes an injected interaction answerable.
    pub(crate) fn register(&mut self, delivered: Delivered) {
        self.by_token.insert(delivered.token.clone(), delivered.id);
        self.by_id.insert(
            delivered.id,
            Pending {
                token: delivered.token,
                created: Instant::now(),
                kind: delivered.kind,
                channel_id: delivered.channel_id,
                message_id: delivered.message_id,
                acknowledged: false,
                deferred: false,
                original: None,
                followups: HashSet::new(),
            },
        );
    }

    /// Whether a token was already handed out.
    pub(crate) fn has_token(&self, token: &str) -> bool {
        self.by_token.contains_key(token)
    }

    fn by_webhook(&mut self, app: &str, token: &str) -> Result<&mut Pending, DcError> {
        if app != APP_ID.to_string() {
            return Err(DcError::unknown(10015, "Webhook"));
        }
        let id = self
            .by_token
            .get(token)
            .ok_or_else(|| DcError::unknown(10015, "Webhook"))?;
        let pending = self
            .by_id
            .get_mut(id)
            .ok_or_else(|| DcError::unknown(10015, "Webhook"))?;
        if pending.created.elapsed() > TOKEN_LIFETIME {
            return Err(DcError::unauthorized_webhook());
        }
        if !pending.acknowledged {
            return Err(DcError::unknown(10015, "Webhook"));
        }
        Ok(pending)
    }
}

fn interaction_extra() -> Option<Value> {
    Some(json!({"webhook_id": APP_ID.to_string(), "application_id": APP_ID.to_string()}))
}

impl DcState {
    /// `POST /interactions/{id}/{token}/callback`.
    pub(crate) fn respond(
        &mut self,
        id: &str,
        token: &str,
        body: &Value,
    ) -> Result<Reply, DcError> {
        let DcState {
            ids,
            channels,
            interactions,
            ..
        } = self;
        let id = snowflake(id, 10062, "interaction")?;
        let pending = interactions
            .by_id
            .get_mut(&id)
            .filter(|p| p.token == token)
            .ok_or_else(|| DcError::unknown(10062, "interaction"))?;
        if pending.acknowledged {
            return Err(DcError::bad(
                40060,
                "Interaction has already been acknowledged.",
            ));
        }
        if pending.created.elapsed() > RESPONSE_WINDOW {
            return Err(DcError::unknown(10062, "interaction"));
        }
        let kind = body.get("type").and_then(Value::as_u64).ok_or_else(|| {
            DcError::invalid_form(
                &["type".into()],
                "BASE_TYPE_REQUIRED",
                "This field is required",
            )
        })?;
        let data = body.get("data").cloned().unwrap_or_else(|| json!({}));
        let from_component = pending.kind == COMPONENT || pending.kind == MODAL_SUBMIT;
        match kind {
            1 if pending.kind == PING => {}
            4 => {
                let message =
                    channels.create(ids, pending.channel_id, &data, interaction_extra())?;
                pending.original = message_id(&message);
            }
            5 => {
                validate(&data, false)?;
                pending.deferred = true;
            }
            6 if from_component => pending.original = pending.message_id,
            7 if from_component => {
                let message_id = pending
                    .message_id
                    .ok_or_else(|| DcError::unknown(10008, "Message"))?;
                channels.edit(pending.channel_id, message_id, &data)?;
                pending.original = Some(message_id);
            }
            8 if pending.kind == AUTOCOMPLETE => {}
            9 if pending.kind != PING && pending.kind != MODAL_SUBMIT => validate_modal(&data)?,
            _ => {
                return Err(DcError::invalid_form(
                    &["type".into()],
                    "INTERACTION_RESPONSE_TYPE_INVALID",
                    "Interaction response type is not valid for this interaction",
                ));
            }
        }
        pending.acknowledged = true;
        Ok(Reply::NoContent)
    }

    /// `POST /webhooks/{app}/{token}`: a follow-up message.
    pub(crate) fn follow_up(
        &mut self,
        app: &str,
        token: &str,
        body: &Value,
    ) -> Result<Reply, DcError> {
        let DcState {
            ids,
            channels,
            interactions,
            ..
        } = self;
        let pending = interactions.by_webhook(app, token)?;
        let message = channels.create(ids, pending.channel_id, body, interaction_extra())?;
        if let Some(id) = message_id(&message) {
            pending.followups.insert(id);
        }
        Ok(Reply::Json(message))
    }

    /// `GET|PATCH|DELETE /webhooks/{app}/{token}/messages/{id|@original}`.
    pub(crate) fn webhook_message(
        &mut self,
        app: &str,
        token: &str,
        target: &str,
        op: WebhookOp<'_>,
    ) -> Result<Reply, DcError> {
        let DcState {
            ids,
            channels,
            interactions,
            ..
        } = self;
        let pending = interactions.by_webhook(app, token)?;
        let message_id = if target == "@original" {
            match (pending.original, &op) {
                (Some(id), _) => id,
                (None, WebhookOp::Edit(body)) if pending.deferred => {
                    return complete_deferred(ids, channels, pending, body);
                }
                _ => return Err(DcError::unknown(10008, "Message")),
            }
        } else {
            let id = snowflake(target, 10008, "Message")?;
            if !pending.followups.contains(&id) {
                return Err(DcError::unknown(10008, "Message"));
            }
            id
        };
        match op {
            WebhookOp::Get => channels
                .get(pending.channel_id, message_id)
                .cloned()
                .map(Reply::Json)
                .ok_or_else(|| DcError::unknown(10008, "Message")),
            WebhookOp::Edit(body) => channels
                .edit(pending.channel_id, message_id, body)
                .map(Reply::Json),
            WebhookOp::Delete => {
                channels.delete(pending.channel_id, message_id)?;
                Ok(Reply::NoContent)
            }
        }
    }
}

/// The first edit of a deferred response creates the message it stands for.
fn complete_deferred(
    ids: &mut Snowflakes,
    channels: &mut Channels,
    pending: &mut Pending,
    body: &Value,
) -> Result<Reply, DcError> {
    let message = channels.create(ids, pending.channel_id, body, interaction_extra())?;
    pending.original = message_id(&message);
    Ok(Reply::Json(message))
}

/// What to do with a webhook message.
#[derive(Debug)]
pub(crate) enum WebhookOp<'a> {
    /// Read it.
    Get,
    /// Edit it with this body.
    Edit(&'a Value),
    /// Delete it.
    Delete,
}

fn message_id(message: &Value) -> Option<u64> {
    message.get("id")?.as_str()?.parse().ok()
}

fn validate_modal(data: &Value) -> Result<(), DcError> {
    let custom_id = data.get("custom_id").and_then(Value::as_str).unwrap_or("");
    if custom_id.is_empty() || custom_id.chars().count() > 100 {
        return Err(DcError::invalid_form(
            &["data".into(), "custom_id".into()],
            "BASE_TYPE_BAD_LENGTH",
            "Must be between 1 and 100 in length.",
        ));
    }
    let title = data.get("title").and_then(Value::as_str).unwrap_or("");
    if title.is_empty() || title.chars().count() > 45 {
        return Err(DcError::invalid_form(
            &["data".into(), "title".into()],
            "BASE_TYPE_BAD_LENGTH",
            "Must be between 1 and 45 in length.",
        ));
    }
    Ok(())
}
