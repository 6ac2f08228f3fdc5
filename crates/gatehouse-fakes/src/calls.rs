//! The ordered record of every API call a fake received and what it answered, served at
//! `GET /_fake/calls`.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clock::now_ms;

/// One API call as the fake understood it, and the answer it gave.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Call {
    /// Position in the log, from 1, so tests can ask "what came after".
    pub seq: u64,
    /// Platform method name (`sendMessage`, `chat.postMessage`, `createMessage`, `gateway.RESUME`).
    pub method: String,
    /// HTTP path (or WebSocket path for frames), so a wrong route is visible too.
    pub path: String,
    /// The chat or channel the call addressed (Telegram `chat_id`, the Discord channel in the
    /// path, Slack `channel`), as the client wrote it; `None` for calls without one.
    pub chat: Option<String>,
    /// Parsed JSON or form body, query parameters merged in; `null` when there was none.
    pub body: Value,
    /// Milliseconds since the Unix epoch when the call arrived.
    pub at_ms: u64,
    /// HTTP status of the answer; `None` for WebSocket frames, calls still being served and
    /// connections cut without an answer.
    pub status: Option<u16>,
    /// The JSON body answered (a lost answer keeps what the fake would have sent); `null`
    /// when there was none.
    pub answer: Value,
    /// Milliseconds since the Unix epoch when the answer was ready.
    pub answered_at_ms: Option<u64>,
    /// The injected fault that shaped this call, if one did.
    pub fault: Option<FaultEffect>,
}

impl Call {
    /// The id of the message this call created, read from its answer: Telegram
    /// `result.message_id`, Discord `id` (createMessage, executeWebhook), Slack `ts`
    /// (`message_ts` for ephemeral messages). How a test finds a card to press its button.
    pub fn sent_message_id(&self) -> Option<String> {
        let field = match self.method.as_str() {
            "sendMessage" => "/result/message_id",
            "createMessage" | "executeWebhook" => "/id",
            "chat.postMessage" => "/ts",
            "chat.postEphemeral" => "/message_ts",
            _ => return None,
        };
        match self.answer.pointer(field)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }
}

/// What an injected fault did to a call, as recorded in [`Call::fault`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultEffect {
    /// Served normally after `delay_ms`.
    Delayed,
    /// Answered with an injected error (status, rate limit), nothing done.
    Error,
    /// Connection cut before anything was done: no answer, no side effect.
    Reset,
    /// Done, then the answer was held back `stall_ms` before it was sent.
    Stalled,
    /// Done (the message exists), but the connection was cut instead of answering.
    LostAnswer,
}

/// The largest number of `calls` that arrived within any `window` (sliding, by `at_ms`):
/// how a test checks a send rate, e.g. at most one message per second to one chat.
pub fn max_calls_within(calls: &[Call], window: Duration) -> usize {
    let window_ms = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
    let mut times: Vec<u64> = calls.iter().map(|c| c.at_ms).collect();
    times.sort_unstable();
    let mut start = 0;
    let mut best = 0;
    for end in 0..times.len() {
        while times[end] - times[start] >= window_ms {
            start += 1;
        }
        best = best.max(end - start + 1);
    }
    best
}

/// Append-only, thread-safe call log.
#[derive(Debug, Default)]
pub(crate) struct CallLog {
    calls: Mutex<Vec<Call>>,
}

impl CallLog {
    /// Appends a call without a chat; returns its `seq`. The log never drops entries, so
    /// order is total.
    pub(crate) fn record(
        &self,
        method: impl Into<String>,
        path: impl Into<String>,
        body: Value,
    ) -> u64 {
        self.record_in(method, path, None, body)
    }

    /// Appends a call that addressed `chat`; returns its `seq`.
    pub(crate) fn record_in(
        &self,
        method: impl Into<String>,
        path: impl Into<String>,
        chat: Option<String>,
        body: Value,
    ) -> u64 {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        let seq = calls.len() as u64 + 1;
        calls.push(Call {
            seq,
            method: method.into(),
            path: path.into(),
            chat,
            body,
            at_ms: now_ms(),
            status: None,
            answer: Value::Null,
            answered_at_ms: None,
            fault: None,
        });
        seq
    }

    /// Attaches the answer (and the fault that shaped it) to call `seq`.
    pub(crate) fn answered(
        &self,
        seq: u64,
        status: Option<u16>,
        answer: Value,
        fault: Option<FaultEffect>,
    ) {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        let index = usize::try_from(seq.saturating_sub(1)).unwrap_or(usize::MAX);
        if let Some(call) = calls.get_mut(index) {
            call.status = status;
            call.answer = answer;
            call.answered_at_ms = Some(now_ms());
            call.fault = fault;
        }
    }

    /// Copy of every call so far, oldest first.
    pub(crate) fn snapshot(&self) -> Vec<Call> {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(ms: u64) -> Call {
        Call {
            seq: 0,
            method: "sendMessage".into(),
            path: String::new(),
            chat: None,
            body: Value::Null,
            at_ms: ms,
            status: Some(200),
            answer: json!({"ok": true, "result": {"message_id": 7}}),
            answered_at_ms: None,
            fault: None,
        }
    }

    #[test]
    fn counts_the_busiest_sliding_window() {
        let calls: Vec<Call> = [0, 100, 999, 1000, 1500, 5000].map(at).into();
        assert_eq!(max_calls_within(&calls, Duration::from_secs(1)), 3);
        assert_eq!(max_calls_within(&calls, Duration::from_millis(1)), 1);
        assert_eq!(max_calls_within(&[], Duration::from_secs(1)), 0);
    }

    #[test]
    fn reads_the_sent_message_id_per_platform() {
        assert_eq!(at(0).sent_message_id().as_deref(), Some("7"));
        let mut slack = at(0);
        slack.method = "chat.postMessage".into();
        slack.answer = json!({"ok": true, "ts": "1.000001"});
        assert_eq!(slack.sent_message_id().as_deref(), Some("1.000001"));
        slack.method = "chat.update".into();
        assert_eq!(slack.sent_message_id(), None);
    }

    #[test]
    fn attaches_answers_to_their_call() {
        let log = CallLog::default();
        let first = log.record("a", "/a", Value::Null);
        let second = log.record_in("b", "/b", Some("42".into()), Value::Null);
        log.answered(
            second,
            Some(429),
            json!({"ok": false}),
            Some(FaultEffect::Error),
        );
        let calls = log.snapshot();
        assert_eq!((first, second), (1, 2));
        assert_eq!(calls[0].status, None);
        assert_eq!(calls[1].chat.as_deref(), Some("42"));
        assert_eq!(calls[1].status, Some(429));
        assert_eq!(calls[1].fault, Some(FaultEffect::Error));
    }
}
