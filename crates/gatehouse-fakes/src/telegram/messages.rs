//! Chats and their messages: sending, editing, deleting, with Telegram's validation.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Value, json};

use super::reply::TgError;
use crate::body::{int_field, json_field, str_field};
use crate::clock::now_secs;

/// Telegram's limit on message text, in characters.
const MAX_TEXT_CHARS: usize = 4096;
/// Telegram's limit on `callback_data`, in bytes.
const MAX_CALLBACK_DATA_BYTES: usize = 64;
/// Chat ids at or below this are supergroups (`-100…`).
const SUPERGROUP_ID_BOUNDARY: i64 = -1_000_000_000_000;
/// Fields of which an inline button must have exactly one.
const BUTTON_ACTIONS: [&str; 10] = [
    "url",
    "callback_data",
    "web_app",
    "login_url",
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "copy_text",
    "callback_game",
    "pay",
];

/// Every chat the bot has seen, with its messages keyed by id (ids are per chat, as in Telegram).
#[derive(Debug, Default)]
pub(crate) struct Chats {
    chats: HashMap<i64, Chat>,
    /// Users who never opened a private chat with the bot; DMs to them fail with 403.
    pub(crate) never_started: HashSet<i64>,
}

#[derive(Debug, Default)]
struct Chat {
    last_message_id: i64,
    messages: BTreeMap<i64, Value>,
}

/// The bot as a message author.
#[derive(Clone, Debug)]
pub(crate) struct BotUser {
    pub(crate) id: i64,
    pub(crate) username: String,
}

impl BotUser {
    /// The `User` object Telegram puts in `from`.
    pub(crate) fn json(&self) -> Value {
        json!({"id": self.id, "is_bot": true, "first_name": "Gatehouse Fake", "username": self.username})
    }
}

/// The `Chat` object for an id, typed by Telegram's id ranges.
pub(crate) fn chat_json(chat_id: i64, forum: bool) -> Value {
    if chat_id > 0 {
        json!({"id": chat_id, "type": "private", "first_name": format!("User {chat_id}")})
    } else if chat_id <= SUPERGROUP_ID_BOUNDARY {
        json!({"id": chat_id, "type": "supergroup", "title": format!("Chat {chat_id}"), "is_forum": forum})
    } else {
        json!({"id": chat_id, "type": "group", "title": format!("Chat {chat_id}")})
    }
}

impl Chats {
    /// Stores an inbound message, giving it the next id of its chat when it has none.
    pub(crate) fn store_inbound(&mut self, chat_id: i64, message: &mut Value) {
        let chat = self.chats.entry(chat_id).or_default();
        let id = match message.get("message_id").and_then(Value::as_i64) {
            Some(id) => id,
            None => chat.last_message_id + 1,
        };
        chat.last_message_id = chat.last_message_id.max(id);
        message["message_id"] = json!(id);
        if message.get("date").is_none() {
            message["date"] = json!(now_secs());
        }
        chat.messages.insert(id, message.clone());
    }

    /// A stored message, for hydrating injected callback queries.
    pub(crate) fn get(&self, chat_id: i64, message_id: i64) -> Option<&Value> {
        self.chats.get(&chat_id)?.messages.get(&message_id)
    }

    /// `sendMessage`.
    pub(crate) fn send_message(&mut self, bot: &BotUser, body: &Value) -> Result<Value, TgError> {
        let chat_id = chat_id(body)?;
        let text = text(body)?;
        check_parse_mode(body)?;
        let markup = reply_markup(body, false)?;
        if chat_id > 0 && self.never_started.contains(&chat_id) {
            return Err(TgError::forbidden(
                "bot can't initiate conversation with a user",
            ));
        }
        let thread = int_field(body, "message_thread_id");
        let reply_to = reply_to(body);
        let chat = self.chats.entry(chat_id).or_default();
        let reply_to_message = match reply_to {
            Some(id) => Some(
                chat.messages
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| TgError::bad_request("message to be replied not found"))?,
            ),
            None => None,
        };
        chat.last_message_id += 1;
        let id = chat.last_message_id;
        let mut message = json!({
            "message_id": id,
            "date": now_secs(),
            "chat": chat_json(chat_id, thread.is_some()),
            "from": bot.json(),
            "text": text,
        });
        if let Some(thread) = thread {
            message["message_thread_id"] = json!(thread);
            message["is_topic_message"] = json!(chat_id <= SUPERGROUP_ID_BOUNDARY);
        }
        if let Some(markup) = markup {
            message["reply_markup"] = markup;
        }
        if let Some(original) = reply_to_message {
            message["reply_to_message"] = original;
        }
        chat.messages.insert(id, message.clone());
        Ok(message)
    }

    /// `editMessageText`: a missing `reply_markup` removes the keyboard, as in Telegram.
    pub(crate) fn edit_text(&mut self, body: &Value) -> Result<Value, TgError> {
        let text = text(body)?;
        check_parse_mode(body)?;
        let markup = reply_markup(body, true)?;
        let message = self.editable(body)?;
        apply_edit(message, Some(text), markup)
    }

    /// `editMessageReplyMarkup`: no `reply_markup` means "remove the keyboard".
    pub(crate) fn edit_markup(&mut self, body: &Value) -> Result<Value, TgError> {
        let markup = reply_markup(body, true)?;
        let message = self.editable(body)?;
        apply_edit(message, None, markup)
    }

    /// `deleteMessage`.
    pub(crate) fn delete(&mut self, body: &Value) -> Result<Value, TgError> {
        let chat_id = chat_id(body)?;
        let message_id = message_id(body)?;
        self.chats
            .get_mut(&chat_id)
            .and_then(|chat| chat.messages.remove(&message_id))
            .map(|_| json!(true))
            .ok_or_else(|| TgError::bad_request("message to delete not found"))
    }

    fn editable(&mut self, body: &Value) -> Result<&mut Value, TgError> {
        if body.get("inline_message_id").is_some() {
            return Err(TgError::bad_request("MESSAGE_ID_INVALID"));
        }
        let chat_id = chat_id(body)?;
        let message_id = message_id(body)?;
        self.chats
            .get_mut(&chat_id)
            .and_then(|chat| chat.messages.get_mut(&message_id))
            .ok_or_else(|| TgError::bad_request("message to edit not found"))
    }
}

fn apply_edit(
    message: &mut Value,
    text: Option<String>,
    markup: Option<Value>,
) -> Result<Value, TgError> {
    let same_text = text
        .as_ref()
        .is_none_or(|t| message.get("text").and_then(Value::as_str) == Some(t));
    let same_markup = message.get("reply_markup") == markup.as_ref();
    if same_text && same_markup {
        return Err(TgError::bad_request(
            "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
        ));
    }
    if let (Some(text), Some(fields)) = (text, message.as_object_mut()) {
        fields.insert("text".into(), json!(text));
    }
    if let Some(fields) = message.as_object_mut() {
        match markup {
            Some(markup) => fields.insert("reply_markup".into(), markup),
            None => fields.remove("reply_markup"),
        };
        fields.insert("edit_date".into(), json!(now_secs()));
    }
    Ok(message.clone())
}

fn chat_id(body: &Value) -> Result<i64, TgError> {
    match body.get("chat_id") {
        None | Some(Value::Null) => Err(TgError::bad_request("chat_id is empty")),
        Some(_) => int_field(body, "chat_id").ok_or_else(|| TgError::bad_request("chat not found")),
    }
}

fn message_id(body: &Value) -> Result<i64, TgError> {
    int_field(body, "message_id")
        .ok_or_else(|| TgError::bad_request("message identifier is not specified"))
}

fn reply_to(body: &Value) -> Option<i64> {
    int_field(body, "reply_to_message_id").or_else(|| {
        json_field(body, "reply_parameters")
            .and_then(Result::ok)
            .and_then(|p| int_field(&p, "message_id"))
    })
}

fn text(body: &Value) -> Result<String, TgError> {
    let text = str_field(body, "text").unwrap_or_default();
    if text.trim().is_empty() {
        return Err(TgError::bad_request("message text is empty"));
    }
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(TgError::bad_request("message is too long"));
    }
    Ok(text)
}

fn check_parse_mode(body: &Value) -> Result<(), TgError> {
    match str_field(body, "parse_mode").as_deref() {
        None | Some("MarkdownV2" | "Markdown" | "HTML") => Ok(()),
        Some(other) => Err(TgError::bad_request(format!(
            "unsupported parse_mode \"{other}\""
        ))),
    }
}

/// Reads and validates `reply_markup`; edits accept inline keyboards only.
fn reply_markup(body: &Value, inline_only: bool) -> Result<Option<Value>, TgError> {
    let Some(markup) = json_field(body, "reply_markup") else {
        return Ok(None);
    };
    let markup = markup
        .map_err(|_| TgError::bad_request("can't parse reply keyboard markup JSON object"))?;
    if !markup.is_object() {
        return Err(TgError::bad_request(
            "can't parse reply keyboard markup JSON object",
        ));
    }
    match markup.get("inline_keyboard") {
        Some(keyboard) => validate_inline_keyboard(keyboard)?,
        None if inline_only => return Err(TgError::bad_request("inline keyboard expected")),
        None => {}
    }
    Ok(Some(markup))
}

fn validate_inline_keyboard(keyboard: &Value) -> Result<(), TgError> {
    let rows = keyboard.as_array().ok_or_else(|| {
        TgError::bad_request(
            "field \"inline_keyboard\" of the InlineKeyboardMarkup must be an Array",
        )
    })?;
    for row in rows {
        let buttons = row.as_array().ok_or_else(|| {
            TgError::bad_request("can't parse inline keyboard button: Array expected")
        })?;
        for button in buttons {
            validate_button(button)?;
        }
    }
    Ok(())
}

fn validate_button(button: &Value) -> Result<(), TgError> {
    let text = button.get("text").and_then(Value::as_str).unwrap_or("");
    if text.is_empty() {
        return Err(TgError::bad_request(
            "can't parse inline keyboard button: Text must be non-empty",
        ));
    }
    let actions = BUTTON_ACTIONS
        .iter()
        .filter(|k| button.get(**k).is_some())
        .count();
    if actions != 1 {
        return Err(TgError::bad_request(
            "can't parse inline keyboard button: InlineKeyboardButton must have exactly one optional field",
        ));
    }
    if let Some(data) = button.get("callback_data") {
        let len = data.as_str().map_or(0, str::len);
        if !(1..=MAX_CALLBACK_DATA_BYTES).contains(&len) {
            return Err(TgError::bad_request("BUTTON_DATA_INVALID"));
        }
    }
    if let Some(url) = button.get("url") {
        let url = url.as_str().unwrap_or("");
        if !["http://", "https://", "tg://"]
            .iter()
            .any(|p| url.starts_with(p))
        {
            return Err(TgError::bad_request(format!(
                "inline keyboard button URL '{url}' is invalid: Unsupported URL protocol"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bot() -> BotUser {
        BotUser {
            id: 1,
            username: "b".into(),
        }
    }

    fn send(chats: &mut Chats, body: Value) -> Result<Value, String> {
        chats
            .send_message(&bot(), &body)
            .map_err(|e| e.description().to_owned())
    }

    #[test]
    fn numbers_messages_per_chat() {
        let mut chats = Chats::default();
        assert_eq!(
            send(&mut chats, json!({"chat_id": 5, "text": "a"})).unwrap()["message_id"],
            1
        );
        assert_eq!(
            send(&mut chats, json!({"chat_id": 5, "text": "b"})).unwrap()["message_id"],
            2
        );
        assert_eq!(
            send(&mut chats, json!({"chat_id": "-7", "text": "c"})).unwrap()["message_id"],
            1
        );
    }

    #[test]
    fn denies_callback_data_over_64_bytes() {
        let mut chats = Chats::default();
        let long = "x".repeat(65);
        let body = json!({"chat_id": 5, "text": "a", "reply_markup":
            {"inline_keyboard": [[{"text": "A", "callback_data": long}]]}});
        assert_eq!(
            send(&mut chats, body).unwrap_err(),
            "Bad Request: BUTTON_DATA_INVALID"
        );
    }

    #[test]
    fn denies_a_button_with_two_actions_or_no_text() {
        let mut chats = Chats::default();
        let two = json!({"chat_id": 5, "text": "a", "reply_markup":
            {"inline_keyboard": [[{"text": "A", "callback_data": "x", "url": "https://x"}]]}});
        assert!(
            send(&mut chats, two)
                .unwrap_err()
                .contains("exactly one optional field")
        );
        let blank = json!({"chat_id": 5, "text": "a", "reply_markup":
            {"inline_keyboard": [[{"text": "", "callback_data": "x"}]]}});
        assert!(
            send(&mut chats, blank)
                .unwrap_err()
                .contains("Text must be non-empty")
        );
    }

    #[test]
    fn denies_dm_to_user_who_never_started_the_bot() {
        let mut chats = Chats::default();
        chats.never_started.insert(9);
        let error = chats
            .send_message(&bot(), &json!({"chat_id": 9, "text": "hi"}))
            .unwrap_err();
        assert_eq!(
            error.description(),
            "Forbidden: bot can't initiate conversation with a user"
        );
    }

    #[test]
    fn denies_an_edit_that_changes_nothing() {
        let mut chats = Chats::default();
        send(&mut chats, json!({"chat_id": 5, "text": "a"})).unwrap();
        let same = chats.edit_text(&json!({"chat_id": 5, "message_id": 1, "text": "a"}));
        assert!(
            same.unwrap_err()
                .description()
                .contains("message is not modified")
        );
        let edited = chats
            .edit_text(&json!({"chat_id": 5, "message_id": 1, "text": "b"}))
            .unwrap();
        assert_eq!(edited["text"], "b");
        assert!(edited.get("edit_date").is_some());
    }

    #[test]
    fn removes_keyboard_when_markup_edit_has_none() {
        let mut chats = Chats::default();
        send(
            &mut chats,
            json!({"chat_id": 5, "text": "a", "reply_markup":
            {"inline_keyboard": [[{"text": "A", "callback_data": "x"}]]}}),
        )
        .unwrap();
        let edited = chats
            .edit_markup(&json!({"chat_id": 5, "message_id": 1}))
            .unwrap();
        assert!(edited.get("reply_markup").is_none());
        assert!(
            chats
                .edit_markup(&json!({"chat_id": 5, "message_id": 1}))
                .is_err()
        );
    }

    #[test]
    fn deletes_once() {
        let mut chats = Chats::default();
        send(&mut chats, json!({"chat_id": 5, "text": "a"})).unwrap();
        assert_eq!(
            chats
                .delete(&json!({"chat_id": 5, "message_id": 1}))
                .unwrap(),
            json!(true)
        );
        assert_eq!(
            chats
                .delete(&json!({"chat_id": 5, "message_id": 1}))
                .unwrap_err()
                .description(),
            "Bad Request: message to delete not found"
        );
    }
}
