//! Conversations and messages: post (with threads), update, delete, ephemeral, DM open.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};

use super::reply::SlError;
use super::{APP_ID, BOT_ID, BOT_USER_ID, TEAM_ID, blocks};
use crate::body::{json_field, str_field};
use crate::clock::now_secs;

const MAX_TEXT_CHARS: usize = 40_000;

/// Message timestamps: unique, increasing, shaped like Slack's `"1700000000.000100"`.
#[derive(Debug, Default)]
struct Clock {
    secs: u64,
    counter: u64,
}

impl Clock {
    fn next(&mut self) -> String {
        let now = now_secs();
        if now > self.secs {
            self.secs = now;
            self.counter = 0;
        }
        self.counter += 1;
        if self.counter > 999_999 {
            self.secs += 1;
            self.counter = 1;
        }
        format!("{}.{:06}", self.secs, self.counter)
    }
}

#[derive(Debug, Default)]
struct Channel {
    messages: BTreeMap<String, Value>,
    ephemeral: Vec<Value>,
}

/// Every conversation the bot has touched, by id.
#[derive(Debug, Default)]
pub(crate) struct Conversations {
    channels: HashMap<String, Channel>,
    dms: HashMap<String, String>,
    clock: Clock,
}

struct Content {
    text: String,
    blocks: Option<Value>,
}

fn content(body: &Value) -> Result<Content, SlError> {
    let text = str_field(body, "text").unwrap_or_default();
    let blocks = match json_field(body, "blocks") {
        None => None,
        Some(Err(_)) => return Err(SlError::api("invalid_blocks_format")),
        Some(Ok(blocks)) => {
            blocks::validate(&blocks)?;
            Some(blocks)
        }
    };
    let has_attachments = body.get("attachments").is_some();
    if text.trim().is_empty()
        && blocks
            .as_ref()
            .is_none_or(|b| b.as_array().is_some_and(Vec::is_empty))
        && !has_attachments
    {
        return Err(SlError::api("no_text"));
    }
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(SlError::api("msg_too_long"));
    }
    Ok(Content { text, blocks })
}

fn channel_arg(body: &Value) -> Result<String, SlError> {
    str_field(body, "channel")
        .filter(|c| !c.is_empty())
        .ok_or_else(|| SlError::api("channel_not_found"))
}

/// `messages` as a history answer lists them: at most `limit`, without their `metadata`
/// unless `include_all_metadata` asks for it.
fn listed<'a>(messages: impl Iterator<Item = &'a Value>, body: &Value) -> Vec<Value> {
    let limit = str_field(body, "limit")
        .and_then(|limit| limit.parse().ok())
        .or_else(|| body.get("limit").and_then(Value::as_u64))
        .unwrap_or(100);
    let with_metadata = matches!(body.get("include_all_metadata"), Some(Value::Bool(true)))
        || str_field(body, "include_all_metadata").as_deref() == Some("true");
    messages
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .map(|message| {
            let mut message = message.clone();
            if !with_metadata && let Some(fields) = message.as_object_mut() {
                fields.remove("metadata");
            }
            message
        })
        .collect()
}

fn ts_arg(body: &Value) -> Result<String, SlError> {
    str_field(body, "ts")
        .filter(|c| !c.is_empty())
        .ok_or_else(|| SlError::api("message_not_found"))
}

impl Conversations {
    /// The DM channel with a user, created on first use; the flag says whether it existed.
    pub(crate) fn open_dm(&mut self, user: &str) -> (String, bool) {
        if let Some(id) = self.dms.get(user) {
            return (id.clone(), true);
        }
        let id = format!("D{:08}", self.dms.len() + 1);
        self.dms.insert(user.to_owned(), id.clone());
        (id, false)
    }

    /// Posting to a user id goes to the DM with that user, as on Slack.
    fn resolve(&mut self, channel: String) -> String {
        if channel.starts_with('U') || channel.starts_with('W') {
            self.open_dm(&channel).0
        } else {
            channel
        }
    }

    /// Every stored message by conversation, oldest first, and the DM id of each user, for
    /// `GET /_fake/messages`: tests learn a posted message's `ts` from here.
    pub(crate) fn history(&self) -> Value {
        let channels: serde_json::Map<String, Value> = self
            .channels
            .iter()
            .map(|(id, channel)| {
                (
                    id.clone(),
                    json!(channel.messages.values().collect::<Vec<_>>()),
                )
            })
            .collect();
        json!({"channels": channels, "dms": self.dms})
    }

    /// `conversations.history`: a conversation's messages outside threads, newest first, at
    /// most `limit` (default 100); each message's `metadata` only with `include_all_metadata`.
    pub(crate) fn history_of(&self, body: &Value) -> Result<Value, SlError> {
        let channel = channel_arg(body)?;
        let messages = self
            .channels
            .get(&channel)
            .ok_or_else(|| SlError::api("channel_not_found"))?
            .messages
            .values()
            .rev()
            .filter(|m| m.get("thread_ts").is_none_or(|t| m.get("ts") == Some(t)));
        Ok(json!({"messages": listed(messages, body), "has_more": false}))
    }

    /// A stored message, by conversation and `ts`.
    pub(crate) fn get(&self, channel: &str, ts: &str) -> Option<&Value> {
        self.channels.get(channel)?.messages.get(ts)
    }

    /// Stores a message a user wrote (injected), giving it a `ts` if it has none.
    pub(crate) fn store_inbound(&mut self, channel: &str, message: &mut Value) {
        let ts = match message.get("ts").and_then(Value::as_str) {
            Some(ts) => ts.to_owned(),
            None => {
                let ts = self.clock.next();
                message["ts"] = json!(ts);
                ts
            }
        };
        self.channels
            .entry(channel.to_owned())
            .or_default()
            .messages
            .insert(ts, message.clone());
    }

    /// `chat.postMessage`.
    pub(crate) fn post(&mut self, body: &Value) -> Result<Value, SlError> {
        let channel = channel_arg(body)?;
        let content = content(body)?;
        let channel = self.resolve(channel);
        let ts = self.clock.next();
        let mut message = json!({"type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID,
            "app_id": APP_ID, "team": TEAM_ID, "text": content.text, "ts": ts});
        if let Some(blocks) = content.blocks {
            message["blocks"] = blocks;
        }
        if let Some(thread) = str_field(body, "thread_ts").filter(|t| !t.is_empty()) {
            message["thread_ts"] = json!(thread);
        }
        if let Some(Ok(metadata)) = json_field(body, "metadata")
            && metadata.is_object()
        {
            message["metadata"] = metadata;
        }
        self.channels
            .entry(channel.clone())
            .or_default()
            .messages
            .insert(ts.clone(), message.clone());
        Ok(json!({"channel": channel, "ts": ts, "message": message}))
    }

    /// `chat.update`: only the bot's own messages.
    pub(crate) fn update(&mut self, body: &Value) -> Result<Value, SlError> {
        let channel = channel_arg(body)?;
        let ts = ts_arg(body)?;
        let content = content(body)?;
        let edited_ts = self.clock.next();
        let message = self
            .channels
            .get_mut(&channel)
            .and_then(|c| c.messages.get_mut(&ts))
            .ok_or_else(|| SlError::api("message_not_found"))?;
        if message.get("user").and_then(Value::as_str) != Some(BOT_USER_ID) {
            return Err(SlError::api("cant_update_message"));
        }
        message["text"] = json!(content.text);
        match content.blocks {
            Some(blocks) => message["blocks"] = blocks,
            None => {
                if let Some(fields) = message.as_object_mut() {
                    fields.remove("blocks");
                }
            }
        }
        message["edited"] = json!({"user": BOT_USER_ID, "ts": edited_ts});
        Ok(json!({"channel": channel, "ts": ts, "text": content.text, "message": message.clone()}))
    }

    /// `chat.delete`: only the bot's own messages.
    pub(crate) fn delete(&mut self, body: &Value) -> Result<Value, SlError> {
        let channel = channel_arg(body)?;
        let ts = ts_arg(body)?;
        let messages = self
            .channels
            .get_mut(&channel)
            .map(|c| &mut c.messages)
            .ok_or_else(|| SlError::api("message_not_found"))?;
        let author = messages
            .get(&ts)
            .ok_or_else(|| SlError::api("message_not_found"))?;
        if author.get("user").and_then(Value::as_str) != Some(BOT_USER_ID) {
            return Err(SlError::api("cant_delete_message"));
        }
        messages.remove(&ts);
        Ok(json!({"channel": channel, "ts": ts}))
    }

    /// `chat.postEphemeral`: seen by one user only; never in the channel's history.
    pub(crate) fn post_ephemeral(&mut self, body: &Value) -> Result<Value, SlError> {
        let channel = channel_arg(body)?;
        let user = str_field(body, "user")
            .filter(|u| !u.is_empty())
            .ok_or_else(|| SlError::api("user_not_found"))?;
        let content = content(body)?;
        let ts = self.clock.next();
        let mut message = json!({"type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID,
            "text": content.text, "ts": ts, "visible_to": user});
        if let Some(blocks) = content.blocks {
            message["blocks"] = blocks;
        }
        if let Some(thread) = str_field(body, "thread_ts") {
            message["thread_ts"] = json!(thread);
        }
        self.channels
            .entry(channel)
            .or_default()
            .ephemeral
            .push(message);
        Ok(json!({"message_ts": ts}))
    }

    /// `conversations.open`.
    pub(crate) fn open(&mut self, body: &Value) -> Result<Value, SlError> {
        if let Some(channel) = str_field(body, "channel").filter(|c| !c.is_empty()) {
            return Ok(json!({"channel": {"id": channel}, "no_op": true, "already_open": true}));
        }
        // Slack takes a comma-separated string; JSON clients (slack-morphism) send an array.
        let users = match body.get("users") {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(","),
            _ => str_field(body, "users").unwrap_or_default(),
        };
        let users: Vec<&str> = users
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .collect();
        match users.as_slice() {
            [] => Err(SlError::api("users_list_not_supplied")),
            [user] => {
                let (id, existed) = self.open_dm(user);
                let mut answer = json!({"channel": {"id": id}});
                if existed {
                    answer["no_op"] = json!(true);
                    answer["already_open"] = json!(true);
                }
                Ok(answer)
            }
            many if many.len() > 8 => Err(SlError::api("too_many_users")),
            many => Ok(json!({"channel": {"id": format!("G{}", many.join("").len())}})),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posts_threads_updates_and_deletes() {
        let mut conversations = Conversations::default();
        let parent = conversations
            .post(&json!({"channel": "C1", "text": "card"}))
            .unwrap();
        let ts = parent["ts"].as_str().unwrap().to_owned();
        let reply = conversations
            .post(&json!({"channel": "C1", "text": "ok", "thread_ts": ts}))
            .unwrap();
        assert_eq!(reply["message"]["thread_ts"], ts.as_str());
        assert!(reply["ts"].as_str().unwrap() > ts.as_str());
        let updated = conversations
            .update(&json!({"channel": "C1", "ts": ts, "text": "done"}))
            .unwrap();
        assert_eq!(updated["message"]["text"], "done");
        conversations
            .delete(&json!({"channel": "C1", "ts": ts}))
            .unwrap();
        let gone = conversations.update(&json!({"channel": "C1", "ts": ts, "text": "x"}));
        assert_eq!(gone.unwrap_err().error(), "message_not_found");
    }

    #[test]
    fn denies_posts_without_text_or_channel() {
        let mut conversations = Conversations::default();
        assert_eq!(
            conversations
                .post(&json!({"channel": "C1"}))
                .unwrap_err()
                .error(),
            "no_text"
        );
        assert_eq!(
            conversations
                .post(&json!({"text": "x"}))
                .unwrap_err()
                .error(),
            "channel_not_found"
        );
    }

    #[test]
    fn opens_one_dm_per_user() {
        let mut conversations = Conversations::default();
        let first = conversations.open(&json!({"users": "U1"})).unwrap();
        let again = conversations.open(&json!({"users": ["U1"]})).unwrap();
        assert_eq!(first["channel"]["id"], again["channel"]["id"]);
        assert_eq!(again["already_open"], true);
        assert_eq!(
            conversations.open(&json!({})).unwrap_err().error(),
            "users_list_not_supplied"
        );
    }

    #[test]
    fn refuses_to_touch_messages_of_users() {
        let mut conversations = Conversations::default();
        let mut message = json!({"type": "message", "user": "U1", "text": "hi"});
        conversations.store_inbound("C1", &mut message);
        let ts = message["ts"].as_str().unwrap();
        let error = conversations
            .update(&json!({"channel": "C1", "ts": ts, "text": "x"}))
            .unwrap_err();
        assert_eq!(error.error(), "cant_update_message");
    }
}
