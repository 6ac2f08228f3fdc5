//! The ordered record of every API call a fake received, served at `GET /_fake/calls`.

use std::sync::{Mutex, PoisonError};

use serde::Serialize;
use serde_json::Value;

use crate::clock::now_ms;

/// One API call as the fake understood it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Call {
    /// Position in the log, from 1, so tests can ask "what came after".
    pub seq: u64,
    /// Platform method name (`sendMessage`, `chat.postMessage`, `createMessage`, `gateway.RESUME`).
    pub method: String,
    /// HTTP path (or WebSocket path for frames), so a wrong route is visible too.
    pub path: String,
    /// Parsed JSON or form body, query parameters merged in; `null` when there was none.
    pub body: Value,
    /// Milliseconds since the Unix epoch when the call arrived.
    pub at_ms: u64,
}

/// Append-only, thread-safe call log.
#[derive(Debug, Default)]
pub(crate) struct CallLog {
    calls: Mutex<Vec<Call>>,
}

impl CallLog {
    /// Appends a call; the log never drops entries, so order is total.
    pub(crate) fn record(&self, method: impl Into<String>, path: impl Into<String>, body: Value) {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        let seq = calls.len() as u64 + 1;
        calls.push(Call {
            seq,
            method: method.into(),
            path: path.into(),
            body,
            at_ms: now_ms(),
        });
    }

    /// Copy of every call so far, oldest first.
    pub(crate) fn snapshot(&self) -> Vec<Call> {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
