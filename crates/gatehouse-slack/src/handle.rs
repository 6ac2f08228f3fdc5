//! What the adapter needs to answer one interaction privately, carried through the chat core
//! inside [`gatehouse_chat::InteractionRef::handle`] (whose `Debug` hides it: a response URL
//! authorizes replies).

use serde::{Deserialize, Serialize};

/// How to reach the person behind an interaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Handle {
    /// A slash command: answered in the command's own response while it waits, through its
    /// `response_url` after that.
    Command {
        /// The command's `trigger_id`, which names the waiting response.
        key: String,
        /// Where a late answer goes (ephemeral by default).
        response_url: String,
    },
    /// A button press, or a message typed in a shared conversation: answered with
    /// `chat.postEphemeral` beside the card or the message, for its author's eyes only.
    Press {
        /// The conversation the card or message is in.
        channel: String,
        /// Who pressed or typed.
        user: String,
        /// The thread the card is in, so the answer appears there too.
        thread_ts: Option<String>,
    },
}

impl Handle {
    /// The opaque string form stored in an `InteractionRef`.
    pub(crate) fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a handle back; `None` for anything this adapter did not write.
    pub(crate) fn decode(handle: &str) -> Option<Handle> {
        serde_json::from_str(handle).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_both_kinds() {
        let handles = [
            Handle::Command {
                key: "t1".into(),
                response_url: "https://hooks.slack.com/commands/1".into(),
            },
            Handle::Press {
                channel: "C1".into(),
                user: "U1".into(),
                thread_ts: Some("1.2".into()),
            },
        ];
        for handle in handles {
            assert_eq!(Handle::decode(&handle.encode()), Some(handle));
        }
    }

    #[test]
    fn refuses_foreign_handles() {
        assert_eq!(Handle::decode("cbq-1"), None);
    }
}
