//! What a hook tells its host: allow, deny or ask, each with a reason people read.

use crate::error::Rejected;
use crate::settings::OnUnreachable;

/// The answer to one hook call, before it takes a host's shape ([`crate::render`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The call may run.
    Allow {
        /// Shown to the user where the host shows one (Claude Code), never to the model.
        reason: Option<String>,
    },
    /// The call is refused; the model (and the user) read why.
    Deny {
        /// Why.
        reason: String,
    },
    /// Gatehouse gives the decision back to the host's own permission prompt. Where the host
    /// has none for the event (Codex's PreToolUse), this is rendered as a deny.
    Ask {
        /// Why Gatehouse did not decide.
        reason: String,
    },
}

impl Answer {
    /// The answer when the gateway could not be reached (`detail`: the connection error),
    /// as the integration's setting says. Never an allow.
    pub fn unreachable(on: OnUnreachable, detail: &str) -> Answer {
        match on {
            OnUnreachable::Deny => Answer::Deny {
                reason: format!(
                    "Gatehouse could not be reached ({detail}), so this call is refused; \
                     start the gateway or check GATEHOUSE_URL"
                ),
            },
            OnUnreachable::Ask => Answer::Ask {
                reason: format!(
                    "Gatehouse could not be reached ({detail}); the decision falls back to \
                     the host's own permission prompt"
                ),
            },
        }
    }

    /// Whether this answer lets the call run.
    pub fn is_allow(&self) -> bool {
        matches!(self, Answer::Allow { .. })
    }
}

impl Rejected {
    /// The deny a rejected input gets.
    pub fn answer(&self) -> Answer {
        Answer::Deny {
            reason: format!("Gatehouse refused this call: {}", self.error),
        }
    }
}
