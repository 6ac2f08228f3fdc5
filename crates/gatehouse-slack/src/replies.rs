//! Slash commands waiting for the chat core's answer, so the answer can travel in the command's
//! own response (the Socket Mode ack payload, or the HTTP response body) instead of a second
//! message. A command waits at most `commandReplyWait`; an answer that comes later finds no
//! waiter and goes to the command's `response_url`.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::oneshot;

/// The waiting slash commands, by `trigger_id`.
#[derive(Debug, Default)]
pub(crate) struct PendingReplies {
    waiting: Mutex<HashMap<String, oneshot::Sender<String>>>,
}

impl PendingReplies {
    /// Starts waiting for the answer to `key`.
    pub(crate) fn expect(&self, key: &str) -> oneshot::Receiver<String> {
        let (tx, rx) = oneshot::channel();
        self.lock().insert(key.to_owned(), tx);
        rx
    }

    /// Waits up to `wait` for the answer to `key`, then stops waiting either way.
    pub(crate) async fn wait(
        &self,
        key: &str,
        rx: oneshot::Receiver<String>,
        wait: Duration,
    ) -> Option<String> {
        let answer = tokio::time::timeout(wait, rx)
            .await
            .ok()
            .and_then(Result::ok);
        self.lock().remove(key);
        answer
    }

    /// Hands `text` to the command waiting under `key`; gives the text back when nobody waits.
    pub(crate) fn fulfil(&self, key: &str, text: &str) -> Result<(), String> {
        let waiter = self.lock().remove(key);
        match waiter {
            Some(tx) => tx.send(text.to_owned()),
            None => Err(text.to_owned()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<String>>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hands_an_answer_to_the_waiting_command() {
        let replies = PendingReplies::default();
        let rx = replies.expect("t1");
        assert_eq!(replies.fulfil("t1", "Allowed once 0f3c9a1e."), Ok(()));
        let answer = replies.wait("t1", rx, Duration::from_secs(1)).await;
        assert_eq!(answer.as_deref(), Some("Allowed once 0f3c9a1e."));
    }

    #[tokio::test(start_paused = true)]
    async fn gives_a_late_answer_back_for_the_response_url() {
        let replies = PendingReplies::default();
        let rx = replies.expect("t1");
        assert_eq!(
            replies.wait("t1", rx, Duration::from_millis(10)).await,
            None
        );
        assert_eq!(replies.fulfil("t1", "late"), Err("late".to_owned()));
    }
}
