//! Webhook mode: `setWebhook`, `deleteWebhook`, `getWebhookInfo` and ordered delivery of
//! queued updates to the bot with `X-Telegram-Bot-Api-Secret-Token`.

use std::sync::Arc;

use serde_json::{Value, json};

use super::Telegram;
use super::reply::TgError;
use super::updates::{Webhook, allowed_updates};
use crate::body::bool_field;
use crate::clock::now_secs;

/// Header Telegram puts the webhook secret in.
pub(crate) const SECRET_HEADER: &str = "X-Telegram-Bot-Api-Secret-Token";

/// `setWebhook`; queued updates start flowing to the new URL in the background.
pub(super) fn set(tg: &Arc<Telegram>, body: &Value) -> Result<Value, TgError> {
    let hook = Webhook::parse(body)?;
    let allowed = allowed_updates(body)?;
    let mut state = tg.lock();
    if bool_field(body, "drop_pending_updates") == Some(true) {
        state.updates.clear();
    }
    if let Some(allowed) = allowed {
        state.updates.set_allowed(allowed);
    }
    let active = hook.is_some();
    state.webhook = hook;
    drop(state);
    if active {
        let tg = Arc::clone(tg);
        tokio::spawn(async move { deliver(&tg).await });
    }
    Ok(json!(true))
}

/// `deleteWebhook`, optionally dropping pending updates.
pub(super) fn delete(tg: &Telegram, body: &Value) -> Value {
    let mut state = tg.lock();
    state.webhook = None;
    if bool_field(body, "drop_pending_updates") == Some(true) {
        state.updates.clear();
    }
    json!(true)
}

/// `getWebhookInfo`, including the last delivery error like Telegram reports it.
pub(super) fn info(tg: &Telegram) -> Value {
    let state = tg.lock();
    let mut info = json!({
        "url": state.webhook.as_ref().map_or("", |h| h.url.as_str()),
        "has_custom_certificate": false,
        "pending_update_count": state.updates.len(),
    });
    if let Some((date, message)) = state.webhook.as_ref().and_then(|h| h.last_error.clone()) {
        info["last_error_date"] = json!(date);
        info["last_error_message"] = json!(message);
    }
    info
}

/// Posts pending updates to the webhook in order, stopping at the first failure (which stays
/// pending, as Telegram keeps it for a retry). Returns one outcome per attempt.
pub(super) async fn deliver(tg: &Telegram) -> Vec<Value> {
    let _turn = tg.delivery.lock().await;
    let mut outcomes = Vec::new();
    loop {
        let (hook, update) = {
            let state = tg.lock();
            match (&state.webhook, state.updates.front()) {
                (Some(hook), Some(update)) => (hook.clone(), update.clone()),
                _ => break,
            }
        };
        let update_id = update.get("update_id").and_then(Value::as_i64).unwrap_or(0);
        let mut request = tg.http.post(&hook.url).json(&update);
        if let Some(secret) = &hook.secret_token {
            request = request.header(SECRET_HEADER, secret);
        }
        let failure = match request.send().await {
            Ok(response) if response.status().is_success() => {
                tg.lock().updates.confirm_front(update_id);
                outcomes
                    .push(json!({"update_id": update_id, "status": response.status().as_u16()}));
                continue;
            }
            Ok(response) => {
                let status = response.status().as_u16();
                let message = format!("Wrong response from the webhook: {}", response.status());
                outcomes.push(json!({"update_id": update_id, "status": status, "error": message}));
                message
            }
            Err(error) => {
                let message = format!("Connection failed: {error}");
                outcomes.push(json!({"update_id": update_id, "error": message}));
                message
            }
        };
        if let Some(hook) = tg.lock().webhook.as_mut() {
            hook.last_error = Some((now_secs(), failure));
        }
        break;
    }
    outcomes
}
