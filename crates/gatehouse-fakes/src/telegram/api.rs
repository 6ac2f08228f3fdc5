//! The `/bot<token>/<method>` endpoint: token check, recording, faults, dispatch.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::Telegram;
use super::messages::BotUser;
use super::reply::{TgError, ok};
use super::{poll, webhook};
use crate::answer::CallSlot;
use crate::body::{self, BodyError, str_field};
use crate::faults::Before;

/// Methods the fake serves, spelled as Telegram documents them; matching ignores case.
const METHODS: [&str; 10] = [
    "getMe",
    "getUpdates",
    "setWebhook",
    "deleteWebhook",
    "getWebhookInfo",
    "sendMessage",
    "editMessageText",
    "editMessageReplyMarkup",
    "deleteMessage",
    "answerCallbackQuery",
];

/// Telegram's limit on callback answer text.
const MAX_CALLBACK_TEXT_CHARS: usize = 200;

/// Serves one Bot API call.
pub(super) async fn method(
    State(tg): State<Arc<Telegram>>,
    Path((bot, name)): Path<(String, String)>,
    uri: Uri,
    headers: HeaderMap,
    slot: CallSlot,
    bytes: Bytes,
) -> Response {
    let known = METHODS
        .iter()
        .copied()
        .find(|m| m.eq_ignore_ascii_case(&name));
    let logged = known.unwrap_or(&name).to_owned();
    let bot_id = bot_id(&bot);
    let path = format!("/bot{}:***/{name}", bot_id.unwrap_or_default());
    let body = match body::parse(&headers, uri.query(), &bytes) {
        Ok(body) => body,
        Err(error) => {
            slot.record(&tg.calls, logged, path, None, Value::Null);
            return TgError::bad_request(describe(error)).into_response();
        }
    };
    let chat = str_field(&body, "chat_id");
    slot.record(&tg.calls, logged, path, chat.clone(), body.clone());
    if !body.is_object() {
        return TgError::bad_request(describe(BodyError::NotAnObject)).into_response();
    }
    let Some(bot_id) = bot_id else {
        return TgError::unauthorized().into_response();
    };
    let Some(method) = known else {
        return TgError::not_found().into_response();
    };
    match tg.faults.before(method, chat.as_deref(), &slot).await {
        Before::Serve => {}
        Before::Fail(fail) => return TgError::from_fault(fail).into_response(),
        Before::Unsent => return TgError::not_found().into_response(),
    }
    match dispatch(&tg, bot_id, method, &body).await {
        Ok(result) => ok(result),
        Err(error) => error.into_response(),
    }
}

fn describe(error: BodyError) -> String {
    match error {
        BodyError::BadJson(e) => format!("can't parse JSON object: {e}"),
        BodyError::NotAnObject => "can't parse JSON object".into(),
        BodyError::BadForm(e) => format!("can't parse form: {e}"),
        BodyError::Unsupported(t) => format!("unsupported content type {t}"),
    }
}

/// The numeric bot id of a `bot<id>:<secret>` path segment, if it is well formed.
fn bot_id(segment: &str) -> Option<i64> {
    let token = segment.strip_prefix("bot")?;
    let (id, secret) = token.split_once(':')?;
    let valid_secret = !secret.is_empty()
        && secret
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !valid_secret || id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    id.parse().ok()
}

async fn dispatch(
    tg: &Arc<Telegram>,
    bot_id: i64,
    method: &str,
    body: &Value,
) -> Result<Value, TgError> {
    match method {
        "getUpdates" => return poll::get_updates(tg, body).await,
        "setWebhook" => return webhook::set(tg, body),
        "deleteWebhook" => return Ok(webhook::delete(tg, body)),
        "getWebhookInfo" => return Ok(webhook::info(tg)),
        _ => {}
    }
    let mut state = tg.lock();
    let bot = BotUser {
        id: bot_id,
        username: state.bot_username.clone(),
    };
    match method {
        "getMe" => Ok(json!({
            "id": bot.id, "is_bot": true, "first_name": "Gatehouse Fake", "username": bot.username,
            "can_join_groups": true, "can_read_all_group_messages": false,
            "supports_inline_queries": false, "can_connect_to_business": false,
            "has_main_web_app": false,
        })),
        "sendMessage" => state.chats.send_message(&bot, body),
        "editMessageText" => state.chats.edit_text(body),
        "editMessageReplyMarkup" => state.chats.edit_markup(body),
        "deleteMessage" => state.chats.delete(body),
        "answerCallbackQuery" => {
            let id = str_field(body, "callback_query_id")
                .filter(|id| !id.is_empty())
                .ok_or_else(|| TgError::bad_request("QUERY_ID_INVALID"))?;
            let text_len = str_field(body, "text").map_or(0, |t| t.chars().count());
            if text_len > MAX_CALLBACK_TEXT_CHARS {
                return Err(TgError::bad_request("MESSAGE_TOO_LONG"));
            }
            match state.callbacks.get_mut(&id) {
                Some(answered) if !*answered => {
                    *answered = true;
                    Ok(json!(true))
                }
                _ => Err(TgError::bad_request(
                    "query is too old and response timeout expired or query ID is invalid",
                )),
            }
        }
        _ => Err(TgError::not_found()),
    }
}

#[cfg(test)]
mod tests {
    use super::bot_id;

    #[test]
    fn reads_bot_id_from_well_formed_tokens_only() {
        assert_eq!(bot_id("bot123:ABC-def_9"), Some(123));
        assert_eq!(bot_id("123:ABC"), None);
        assert_eq!(bot_id("botabc:ABC"), None);
        assert_eq!(bot_id("bot123:"), None);
        assert_eq!(bot_id("bot123:a b"), None);
    }
}
