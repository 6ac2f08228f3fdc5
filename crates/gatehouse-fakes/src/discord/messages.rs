//! Channels, DMs and messages with Discord's validation of content and components.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Value, json};

use super::nonces::Nonces;
use super::reply::DcError;
use super::{BOT_ID, GUILD_ID};
use crate::body::bool_field;
use crate::clock::{iso8601, now_ms};

/// Discord's limits.
const MAX_CONTENT_CHARS: usize = 2000;
const MAX_EMBEDS: usize = 10;
const MAX_ROWS: usize = 5;
const MAX_ROW_ITEMS: usize = 5;
const MAX_CUSTOM_ID_CHARS: usize = 100;
const MAX_LABEL_CHARS: usize = 80;

/// Increasing ids shaped like Discord snowflakes.
#[derive(Debug)]
pub(crate) struct Snowflakes(u64);

impl Default for Snowflakes {
    fn default() -> Self {
        Self(1_200_000_000_000_000_000)
    }
}

impl Snowflakes {
    /// The next unused id.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 += 1;
        self.0
    }
}

/// The bot's `User` object.
pub(crate) fn bot_user() -> Value {
    json!({"id": BOT_ID.to_string(), "username": "gatehouse-fake", "discriminator": "0",
           "global_name": "Gatehouse Fake", "avatar": null, "bot": true})
}

/// A `User` object for an id, completing what a test left out.
pub(crate) fn user_json(user: &Value) -> Value {
    let mut user = user.clone();
    let id = user
        .get("id")
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned));
    if let (Some(id), Some(fields)) = (id, user.as_object_mut()) {
        fields.insert("id".into(), json!(id));
        fields
            .entry("username")
            .or_insert_with(|| json!(format!("user{id}")));
        fields.entry("discriminator").or_insert_with(|| json!("0"));
        fields.entry("global_name").or_insert(Value::Null);
        fields.entry("avatar").or_insert(Value::Null);
    }
    user
}

/// Every channel the bot has touched. Unknown ids are guild text channels of one guild.
#[derive(Debug, Default)]
pub(crate) struct Channels {
    channels: HashMap<u64, Channel>,
    dms: HashMap<u64, u64>,
    /// Users whose DMs are closed to the bot: messages to them fail with 50007.
    pub(crate) dm_closed: HashSet<u64>,
    /// Recent message nonces, for `enforce_nonce`.
    pub(crate) nonces: Nonces,
}

#[derive(Debug)]
struct Channel {
    guild_id: Option<u64>,
    recipient: Option<u64>,
    /// The channel a thread belongs to; `None` for anything but a thread.
    parent_id: Option<u64>,
    messages: BTreeMap<u64, Value>,
}

impl Channels {
    fn channel(&mut self, id: u64) -> &mut Channel {
        self.channels.entry(id).or_insert_with(|| Channel {
            guild_id: Some(GUILD_ID),
            recipient: None,
            parent_id: None,
            messages: BTreeMap::new(),
        })
    }

    /// A new public thread (type 11) in the guild channel `parent`, as a thread started from
    /// a message or with `POST /channels/{parent}/threads` would be; its id.
    pub(crate) fn open_thread(&mut self, ids: &mut Snowflakes, parent: u64) -> u64 {
        let id = ids.next();
        self.channels.insert(
            id,
            Channel {
                guild_id: Some(GUILD_ID),
                recipient: None,
                parent_id: Some(parent),
                messages: BTreeMap::new(),
            },
        );
        id
    }

    /// The thread's parent channel, `None` for a channel that is no thread.
    pub(crate) fn parent_of(&mut self, channel_id: u64) -> Option<u64> {
        self.channel(channel_id).parent_id
    }

    /// `GET /channels/{id}`: the channel object — a DM (type 1), a public thread (type 11) or
    /// a guild text channel (type 0).
    pub(crate) fn channel_json(&mut self, id: u64) -> Value {
        let channel = self.channel(id);
        match (channel.recipient, channel.parent_id) {
            (Some(recipient), _) => json!({"id": id.to_string(), "type": 1, "flags": 0,
                "last_message_id": null, "recipients": [user_json(&json!({"id": recipient}))]}),
            (None, Some(parent)) => json!({"id": id.to_string(), "type": 11,
                "guild_id": GUILD_ID.to_string(), "parent_id": parent.to_string(),
                "name": format!("thread-{id}"), "flags": 0, "owner_id": BOT_ID.to_string(),
                "thread_metadata": {"archived": false, "auto_archive_duration": 1440,
                    "archive_timestamp": iso8601(now_ms()), "locked": false}}),
            (None, None) => json!({"id": id.to_string(), "type": 0,
                "guild_id": GUILD_ID.to_string(), "name": format!("channel-{id}"),
                "position": 0, "permission_overwrites": [], "nsfw": false, "parent_id": null,
                "flags": 0}),
        }
    }

    /// The guild of a channel, `None` for DMs.
    pub(crate) fn guild_of(&mut self, channel_id: u64) -> Option<u64> {
        self.channel(channel_id).guild_id
    }

    /// `POST /users/@me/channels`: one DM channel per recipient, as on Discord.
    pub(crate) fn open_dm(&mut self, ids: &mut Snowflakes, recipient: u64) -> Value {
        let id = *self.dms.entry(recipient).or_insert_with(|| ids.next());
        self.channels.entry(id).or_insert_with(|| Channel {
            guild_id: None,
            recipient: Some(recipient),
            parent_id: None,
            messages: BTreeMap::new(),
        });
        json!({"id": id.to_string(), "type": 1, "last_message_id": null, "flags": 0,
               "recipients": [user_json(&json!({"id": recipient}))]})
    }

    /// Creates a bot message after validation; `extra` fields (interaction metadata) are
    /// merged. With `enforce_nonce`, a nonce seen within the window returns that message.
    pub(crate) fn create(
        &mut self,
        ids: &mut Snowflakes,
        channel_id: u64,
        body: &Value,
        extra: Option<Value>,
    ) -> Result<Value, DcError> {
        validate(body, true)?;
        let nonce = Nonces::key(body)?;
        if bool_field(body, "enforce_nonce") == Some(true)
            && let Some(nonce) = &nonce
            && let Some((channel, message)) = self.nonces.earlier(nonce)
            && let Some(earlier) = self.get(channel, message)
        {
            return Ok(earlier.clone());
        }
        let dm_closed = self.dm_closed.clone();
        let channel = self.channel(channel_id);
        if channel
            .recipient
            .is_some_and(|user| dm_closed.contains(&user))
        {
            return Err(DcError::forbidden(
                50007,
                "Cannot send messages to this user",
            ));
        }
        let id = ids.next();
        let mut message = json!({
            "id": id.to_string(), "channel_id": channel_id.to_string(), "author": bot_user(),
            "content": body.get("content").cloned().unwrap_or(json!("")),
            "timestamp": iso8601(now_ms()), "edited_timestamp": null, "tts": false,
            "mention_everyone": false, "mentions": [], "mention_roles": [], "attachments": [],
            "embeds": body.get("embeds").cloned().unwrap_or(json!([])),
            "components": body.get("components").cloned().unwrap_or(json!([])),
            "pinned": false, "type": 0,
            "flags": body.get("flags").cloned().unwrap_or(json!(0)),
        });
        if let Some(guild) = channel.guild_id {
            message["guild_id"] = json!(guild.to_string());
        }
        if let Some(given) = body.get("nonce").filter(|n| !n.is_null()) {
            message["nonce"] = given.clone();
        }
        if let Some(reference) = body.get("message_reference") {
            message["message_reference"] = reference.clone();
            message["type"] = json!(19);
        }
        if let (Some(Value::Object(extra)), Some(fields)) = (extra, message.as_object_mut()) {
            fields.extend(extra);
        }
        channel.messages.insert(id, message.clone());
        if let Some(nonce) = nonce {
            self.nonces.remember(nonce, channel_id, id);
        }
        Ok(message)
    }

    /// Stores a message injected as if a user had written it.
    pub(crate) fn store_inbound(&mut self, channel_id: u64, message_id: u64, message: Value) {
        self.channel(channel_id)
            .messages
            .insert(message_id, message);
    }

    /// A stored message.
    pub(crate) fn get(&self, channel_id: u64, message_id: u64) -> Option<&Value> {
        self.channels.get(&channel_id)?.messages.get(&message_id)
    }

    /// `PATCH …/messages/{id}`: only the bot's own messages; given fields replace old ones.
    pub(crate) fn edit(
        &mut self,
        channel_id: u64,
        message_id: u64,
        body: &Value,
    ) -> Result<Value, DcError> {
        validate(body, false)?;
        let message = self
            .channels
            .get_mut(&channel_id)
            .and_then(|c| c.messages.get_mut(&message_id))
            .ok_or_else(|| DcError::unknown(10008, "Message"))?;
        if message.pointer("/author/id").and_then(Value::as_str) != Some(&BOT_ID.to_string()) {
            return Err(DcError::forbidden(
                50005,
                "Cannot edit a message authored by another user",
            ));
        }
        for key in [
            "content",
            "embeds",
            "components",
            "flags",
            "allowed_mentions",
        ] {
            if let Some(value) = body.get(key) {
                message[key] = if value.is_null() {
                    default_of(key)
                } else {
                    value.clone()
                };
            }
        }
        message["edited_timestamp"] = json!(iso8601(now_ms()));
        Ok(message.clone())
    }

    /// `DELETE …/messages/{id}`.
    pub(crate) fn delete(&mut self, channel_id: u64, message_id: u64) -> Result<(), DcError> {
        self.channels
            .get_mut(&channel_id)
            .and_then(|c| c.messages.remove(&message_id))
            .map(|_| ())
            .ok_or_else(|| DcError::unknown(10008, "Message"))
    }
}

fn default_of(key: &str) -> Value {
    match key {
        "content" => json!(""),
        "flags" => json!(0),
        "allowed_mentions" => Value::Null,
        _ => json!([]),
    }
}

fn form(path: &[&str], code: &str, message: &str) -> DcError {
    let path: Vec<String> = path.iter().map(|p| (*p).to_owned()).collect();
    DcError::invalid_form(&path, code, message)
}

/// Validates message fields; `creating` also refuses an empty message.
pub(crate) fn validate(body: &Value, creating: bool) -> Result<(), DcError> {
    let content = body.get("content").and_then(Value::as_str).unwrap_or("");
    if content.chars().count() > MAX_CONTENT_CHARS {
        return Err(form(
            &["content"],
            "BASE_TYPE_MAX_LENGTH",
            "Must be 2000 or fewer in length.",
        ));
    }
    let embeds = body
        .get("embeds")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if embeds > MAX_EMBEDS {
        return Err(form(
            &["embeds"],
            "BASE_TYPE_MAX_LENGTH",
            "Must be 10 or fewer in length.",
        ));
    }
    let components = match body.get("components") {
        None | Some(Value::Null) => 0,
        Some(rows) => validate_components(rows)?,
    };
    let has_other = ["attachments", "sticker_ids", "poll", "files"]
        .iter()
        .any(|k| {
            body.get(*k)
                .is_some_and(|v| v.as_array().is_none_or(|a| !a.is_empty()))
        });
    if creating && content.is_empty() && embeds == 0 && components == 0 && !has_other {
        return Err(DcError::bad(50006, "Cannot send an empty message"));
    }
    Ok(())
}

/// Checks action rows, buttons and selects; returns the number of rows.
fn validate_components(rows: &Value) -> Result<usize, DcError> {
    let rows = rows
        .as_array()
        .ok_or_else(|| form(&["components"], "BASE_TYPE_ARRAY", "Must be an array."))?;
    if rows.len() > MAX_ROWS {
        return Err(form(
            &["components"],
            "BASE_TYPE_BAD_LENGTH",
            "Must be between 0 and 5 in length.",
        ));
    }
    let mut custom_ids = HashSet::new();
    for (r, row) in rows.iter().enumerate() {
        let r = r.to_string();
        if row.get("type").and_then(Value::as_u64) != Some(1) {
            return Err(form(
                &["components", &r, "type"],
                "UNION_TYPE_CHOICES",
                "Value of field \"type\" must be one of (1,).",
            ));
        }
        let items = row
            .get("components")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        if items.is_empty() || items.len() > MAX_ROW_ITEMS {
            return Err(form(
                &["components", &r, "components"],
                "BASE_TYPE_BAD_LENGTH",
                "Must be between 1 and 5 in length.",
            ));
        }
        for (c, item) in items.iter().enumerate() {
            let c = c.to_string();
            let path = ["components", r.as_str(), "components", c.as_str()];
            if let Some(id) = validate_item(&path, item)?
                && !custom_ids.insert(id)
            {
                return Err(form(
                    &path,
                    "COMPONENT_CUSTOM_ID_DUPLICATED",
                    "Component custom id cannot be duplicated",
                ));
            }
        }
    }
    Ok(rows.len())
}

/// Validates one button or select; returns its custom id, if it has one.
fn validate_item(path: &[&str], item: &Value) -> Result<Option<String>, DcError> {
    let at = |field: &'static str| [path, &[field]].concat();
    let kind = item.get("type").and_then(Value::as_u64).unwrap_or(0);
    let custom_id = item
        .get("custom_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    match kind {
        2 => {
            let style = item.get("style").and_then(Value::as_u64).unwrap_or(0);
            if !(1..=6).contains(&style) {
                return Err(form(
                    &at("style"),
                    "BASE_TYPE_CHOICES",
                    "Value must be one of {1, 2, 3, 4, 5, 6}.",
                ));
            }
            let label = item.get("label").and_then(Value::as_str).unwrap_or("");
            if label.chars().count() > MAX_LABEL_CHARS {
                return Err(form(
                    &at("label"),
                    "BASE_TYPE_MAX_LENGTH",
                    "Must be 80 or fewer in length.",
                ));
            }
            if style == 5 {
                if item.get("url").and_then(Value::as_str).is_none() {
                    return Err(form(
                        &at("url"),
                        "BASE_TYPE_REQUIRED",
                        "This field is required",
                    ));
                }
                if custom_id.is_some() {
                    return Err(form(
                        path,
                        "BUTTON_COMPONENT_CUSTOM_ID_PROHIBITED",
                        "A link button cannot have a custom id",
                    ));
                }
                return Ok(None);
            }
            if style == 6 {
                return Ok(None);
            }
        }
        3 | 5..=8 => {}
        _ => {
            return Err(form(
                &at("type"),
                "UNION_TYPE_CHOICES",
                "Value of field \"type\" must be one of (2, 3, 5, 6, 7, 8).",
            ));
        }
    }
    let Some(custom_id) = custom_id else {
        return Err(form(
            &at("custom_id"),
            "BASE_TYPE_REQUIRED",
            "This field is required",
        ));
    };
    if custom_id.is_empty() || custom_id.chars().count() > MAX_CUSTOM_ID_CHARS {
        return Err(form(
            &at("custom_id"),
            "BASE_TYPE_BAD_LENGTH",
            "Must be between 1 and 100 in length.",
        ));
    }
    Ok(Some(custom_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn button(custom_id: &str) -> Value {
        json!({"components": [{"type": 1, "components": [
            {"type": 2, "style": 3, "label": "Allow", "custom_id": custom_id}]}]})
    }

    #[test]
    fn denies_custom_id_over_100_chars() {
        assert!(validate(&button(&"x".repeat(100)), true).is_ok());
        let error = validate(&button(&"x".repeat(101)), true).unwrap_err();
        assert_eq!(
            error,
            DcError::invalid_form(
                &["components", "0", "components", "0", "custom_id"].map(String::from),
                "BASE_TYPE_BAD_LENGTH",
                "Must be between 1 and 100 in length."
            )
        );
    }

    #[test]
    fn denies_empty_and_overlong_messages() {
        assert_eq!(
            validate(&json!({}), true),
            Err(DcError::bad(50006, "Cannot send an empty message"))
        );
        assert!(validate(&json!({}), false).is_ok());
        assert!(validate(&json!({"content": "x".repeat(2001)}), true).is_err());
    }

    #[test]
    fn denies_duplicate_custom_ids_and_bare_components() {
        let duplicate = json!({"components": [{"type": 1, "components": [
            {"type": 2, "style": 1, "custom_id": "a"}, {"type": 2, "style": 4, "custom_id": "a"}]}]});
        assert!(validate(&duplicate, true).is_err());
        let bare = json!({"components": [{"type": 2, "style": 1, "custom_id": "a"}]});
        assert!(validate(&bare, true).is_err());
    }

    #[test]
    fn opens_one_dm_per_user_and_refuses_closed_dms() {
        let mut ids = Snowflakes::default();
        let mut channels = Channels::default();
        let first = channels.open_dm(&mut ids, 7);
        assert_eq!(channels.open_dm(&mut ids, 7)["id"], first["id"]);
        channels.dm_closed.insert(7);
        let dm: u64 = first["id"].as_str().unwrap().parse().unwrap();
        let error = channels
            .create(&mut ids, dm, &json!({"content": "hi"}), None)
            .unwrap_err();
        assert_eq!(
            error,
            DcError::forbidden(50007, "Cannot send messages to this user")
        );
    }

    #[test]
    fn edits_only_own_messages() {
        let mut ids = Snowflakes::default();
        let mut channels = Channels::default();
        let sent = channels
            .create(&mut ids, 9, &json!({"content": "a"}), None)
            .unwrap();
        let id: u64 = sent["id"].as_str().unwrap().parse().unwrap();
        let edited = channels
            .edit(9, id, &json!({"content": "b", "components": []}))
            .unwrap();
        assert_eq!(edited["content"], "b");
        assert!(edited["edited_timestamp"].is_string());
        channels.store_inbound(9, 5, json!({"id": "5", "author": {"id": "1"}}));
        assert!(channels.edit(9, 5, &json!({"content": "x"})).is_err());
        assert_eq!(
            channels.edit(9, 6, &json!({})),
            Err(DcError::unknown(10008, "Message"))
        );
    }
}
