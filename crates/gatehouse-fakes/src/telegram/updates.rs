//! The update queue behind `getUpdates` and webhooks: ids, `offset` confirmation,
//! `allowed_updates` filtering and the webhook registration.

use std::collections::VecDeque;

use serde_json::{Value, json};

use super::reply::TgError;
use crate::body::{int_field, json_field, str_field};

/// Update kinds Telegram leaves out unless asked for explicitly.
const OPT_IN_KINDS: [&str; 3] = ["chat_member", "message_reaction", "message_reaction_count"];
/// Largest `limit` Telegram accepts.
const MAX_LIMIT: usize = 100;

/// Pending updates, oldest first. An update stays until a later `offset` confirms it.
#[derive(Debug)]
pub(crate) struct UpdateQueue {
    next_update_id: i64,
    pending: VecDeque<Value>,
    allowed: Vec<String>,
    /// Bumped by every `getUpdates`; an older poll that sees a newer generation ends with 409.
    pub(crate) poll_generation: u64,
}

impl Default for UpdateQueue {
    fn default() -> Self {
        Self {
            next_update_id: 1,
            pending: VecDeque::new(),
            allowed: Vec::new(),
            poll_generation: 0,
        }
    }
}

/// The kind of an update: its one field besides `update_id`.
pub(crate) fn update_kind(update: &Value) -> Option<String> {
    let fields = update.as_object()?;
    let mut kinds = fields.keys().filter(|k| *k != "update_id");
    let kind = kinds.next()?.clone();
    kinds.next().is_none().then_some(kind)
}

impl UpdateQueue {
    /// Gives the update its id (or checks the one it has) and says whether it passes the filter.
    pub(crate) fn assign_id(&mut self, update: &mut Value) -> Result<i64, String> {
        let id = match update.get("update_id") {
            None => self.next_update_id,
            Some(v) => v.as_i64().ok_or("update_id must be an integer")?,
        };
        if id < self.next_update_id {
            return Err(format!(
                "update_id {id} is not above the last one ({})",
                self.next_update_id - 1
            ));
        }
        self.next_update_id = id + 1;
        update["update_id"] = json!(id);
        Ok(id)
    }

    /// Whether Telegram would create an update of this kind under the current filter.
    pub(crate) fn allows(&self, kind: &str) -> bool {
        if self.allowed.is_empty() {
            !OPT_IN_KINDS.contains(&kind)
        } else {
            self.allowed.iter().any(|k| k == kind)
        }
    }

    /// Queues an update that already has its id.
    pub(crate) fn push(&mut self, update: Value) {
        self.pending.push_back(update);
    }

    /// Number of unconfirmed updates, for `getWebhookInfo`.
    pub(crate) fn len(&self) -> usize {
        self.pending.len()
    }

    /// Drops every pending update (`drop_pending_updates`).
    pub(crate) fn clear(&mut self) {
        self.pending.clear();
    }

    /// The oldest pending update, for webhook delivery.
    pub(crate) fn front(&self) -> Option<&Value> {
        self.pending.front()
    }

    /// Removes the oldest update once a webhook accepted it.
    pub(crate) fn confirm_front(&mut self, update_id: i64) {
        if self
            .pending
            .front()
            .and_then(|u| u.get("update_id"))
            .and_then(Value::as_i64)
            == Some(update_id)
        {
            self.pending.pop_front();
        }
    }

    /// Applies `offset` (positive: confirm below it; negative: keep only the last `-offset`).
    pub(crate) fn confirm(&mut self, offset: i64) {
        if offset < 0 {
            let keep = usize::try_from(offset.unsigned_abs()).unwrap_or(usize::MAX);
            while self.pending.len() > keep {
                self.pending.pop_front();
            }
        } else {
            self.pending
                .retain(|u| u.get("update_id").and_then(Value::as_i64).unwrap_or(0) >= offset);
        }
    }

    /// Sets the filter for updates created from now on.
    pub(crate) fn set_allowed(&mut self, allowed: Vec<String>) {
        self.allowed = allowed;
    }

    /// Up to `limit` pending updates, without removing them.
    pub(crate) fn peek(&self, limit: usize) -> Vec<Value> {
        self.pending.iter().take(limit).cloned().collect()
    }
}

/// Parameters of one `getUpdates` call.
#[derive(Debug, PartialEq)]
pub(crate) struct Poll {
    pub(crate) offset: Option<i64>,
    pub(crate) limit: usize,
    pub(crate) timeout_secs: u64,
    pub(crate) allowed: Option<Vec<String>>,
}

impl Poll {
    /// Reads `offset`, `limit` (1–100), `timeout` (capped at 50 s) and `allowed_updates`.
    pub(crate) fn parse(body: &Value) -> Result<Self, TgError> {
        let limit = int_field(body, "limit")
            .unwrap_or(MAX_LIMIT as i64)
            .clamp(1, MAX_LIMIT as i64);
        let timeout = int_field(body, "timeout").unwrap_or(0).clamp(0, 50);
        Ok(Self {
            offset: int_field(body, "offset"),
            limit: usize::try_from(limit).unwrap_or(MAX_LIMIT),
            timeout_secs: u64::try_from(timeout).unwrap_or(0),
            allowed: allowed_updates(body)?,
        })
    }
}

/// Reads `allowed_updates` (a JSON array of strings, possibly JSON-encoded in a form).
pub(crate) fn allowed_updates(body: &Value) -> Result<Option<Vec<String>>, TgError> {
    let Some(value) = json_field(body, "allowed_updates") else {
        return Ok(None);
    };
    let bad = || TgError::bad_request("can't parse allowed updates");
    let list = value.map_err(|_| bad())?;
    let items = list.as_array().ok_or_else(bad)?;
    items
        .iter()
        .map(|item| item.as_str().map(str::to_owned).ok_or_else(bad))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// A registered webhook (`setWebhook`).
#[derive(Clone, Debug)]
pub(crate) struct Webhook {
    pub(crate) url: String,
    pub(crate) secret_token: Option<String>,
    pub(crate) last_error: Option<(u64, String)>,
}

impl Webhook {
    /// Validates `setWebhook`; `None` means the call removes the webhook (empty url).
    pub(crate) fn parse(body: &Value) -> Result<Option<Self>, TgError> {
        let url = str_field(body, "url").unwrap_or_default();
        if url.is_empty() {
            return Ok(None);
        }
        // Telegram demands HTTPS; the fake also takes http:// so loopback tests need no TLS.
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(TgError::bad_request(
                "bad webhook: An HTTPS URL must be provided for webhook",
            ));
        }
        let secret_token = str_field(body, "secret_token").filter(|s| !s.is_empty());
        if let Some(secret) = &secret_token {
            let allowed = secret.len() <= 256
                && secret
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            if !allowed {
                return Err(TgError::bad_request(
                    "secret token contains unallowed characters",
                ));
            }
        }
        Ok(Some(Self {
            url,
            secret_token,
            last_error: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queued(queue: &mut UpdateQueue, n: usize) {
        for _ in 0..n {
            let mut update = json!({"message": {}});
            queue.assign_id(&mut update).unwrap();
            queue.push(update);
        }
    }

    #[test]
    fn confirms_updates_below_offset_only() {
        let mut queue = UpdateQueue::default();
        queued(&mut queue, 3);
        queue.confirm(3);
        assert_eq!(queue.peek(10), vec![json!({"message": {}, "update_id": 3})]);
    }

    #[test]
    fn negative_offset_keeps_the_last_updates() {
        let mut queue = UpdateQueue::default();
        queued(&mut queue, 5);
        queue.confirm(-2);
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.front().unwrap()["update_id"], 4);
    }

    #[test]
    fn denies_update_ids_that_go_backwards() {
        let mut queue = UpdateQueue::default();
        queued(&mut queue, 2);
        assert!(
            queue
                .assign_id(&mut json!({"update_id": 2, "message": {}}))
                .is_err()
        );
        assert_eq!(
            queue.assign_id(&mut json!({"update_id": 10, "message": {}})),
            Ok(10)
        );
    }

    #[test]
    fn filters_opt_in_kinds_by_default() {
        let mut queue = UpdateQueue::default();
        assert!(queue.allows("message"));
        assert!(!queue.allows("chat_member"));
        queue.set_allowed(vec!["callback_query".into()]);
        assert!(!queue.allows("message"));
        assert!(queue.allows("callback_query"));
    }

    #[test]
    fn reads_poll_parameters_from_form_strings() {
        let poll = Poll::parse(&json!({"offset": "4", "timeout": "99", "limit": "0",
            "allowed_updates": "[\"message\"]"}))
        .unwrap();
        assert_eq!(
            poll,
            Poll {
                offset: Some(4),
                limit: 1,
                timeout_secs: 50,
                allowed: Some(vec!["message".into()])
            }
        );
    }

    #[test]
    fn denies_webhook_secret_with_bad_characters() {
        assert!(Webhook::parse(&json!({"url": "https://x", "secret_token": "a b"})).is_err());
        assert!(Webhook::parse(&json!({"url": "ftp://x"})).is_err());
        assert!(Webhook::parse(&json!({"url": ""})).unwrap().is_none());
    }
}
