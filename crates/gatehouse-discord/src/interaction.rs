//! Acknowledging interactions and answering them privately.
//!
//! Discord wants a response within 3 seconds, before the core has decided anything, so every
//! interaction is deferred at once: a button press with DEFERRED_UPDATE_MESSAGE (type 6, the
//! card stays as it is), a command with an ephemeral DEFERRED_CHANNEL_MESSAGE (type 5, flags
//! 64). The core's answer then arrives through [`Channel::answer`](gatehouse_chat::Channel) as
//! an ephemeral follow-up (presses) or as the deferred reply itself (commands).

use gatehouse_chat::{ChatError, InteractionRef};
use serenity::all::{
    ApplicationId, CreateAllowedMentions, CreateInteractionResponse,
    CreateInteractionResponseFollowup, CreateInteractionResponseMessage, EditInteractionResponse,
    InteractionId,
};
use serenity::http::{LightMethod, Route};

use crate::classify::{self, CHANNEL};
use crate::markup::reply_text;
use crate::rest::Rest;

/// What was interacted with; decides how it is acknowledged and answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A button on a card.
    Component,
    /// `/approve` or `/elevated`.
    Command,
}

/// Everything needed to answer one interaction, carried in [`InteractionRef::handle`] as
/// `<kind>:<application id>:<token>`.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Handle {
    pub(crate) kind: Kind,
    pub(crate) application_id: u64,
    pub(crate) token: String,
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("kind", &self.kind)
            .field("application_id", &self.application_id)
            .field("token", &"**REDACTED**")
            .finish()
    }
}

impl Handle {
    /// The core's opaque reference to this interaction.
    pub(crate) fn to_ref(&self) -> InteractionRef {
        let kind = match self.kind {
            Kind::Component => "component",
            Kind::Command => "command",
        };
        InteractionRef {
            channel: CHANNEL.to_owned(),
            handle: format!("{kind}:{}:{}", self.application_id, self.token),
        }
    }

    /// Reads a handle back; anything else is refused rather than sent somewhere.
    pub(crate) fn parse(interaction: &InteractionRef) -> Result<Handle, ChatError> {
        let refuse = || classify::permanent("not a discord interaction handle".to_owned());
        if interaction.channel != CHANNEL {
            return Err(refuse());
        }
        let mut parts = interaction.handle.splitn(3, ':');
        let (Some(kind), Some(application_id), Some(token)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return Err(refuse());
        };
        let kind = match kind {
            "component" => Kind::Component,
            "command" => Kind::Command,
            _ => return Err(refuse()),
        };
        let application_id = application_id.parse::<u64>().map_err(|_| refuse())?;
        if application_id == 0 || token.is_empty() || token.contains('/') {
            return Err(refuse());
        }
        Ok(Handle {
            kind,
            application_id,
            token: token.to_owned(),
        })
    }
}

/// Acknowledges an interaction the moment it arrives.
pub(crate) async fn defer(
    rest: &Rest,
    kind: Kind,
    interaction_id: InteractionId,
    token: &str,
) -> Result<(), ChatError> {
    let response = match kind {
        Kind::Component => CreateInteractionResponse::Acknowledge,
        Kind::Command => CreateInteractionResponse::Defer(
            CreateInteractionResponseMessage::new().ephemeral(true),
        ),
    };
    let route = Route::InteractionResponse {
        interaction_id,
        token,
    };
    rest.send(route, LightMethod::Post, Some(&response)).await
}

/// Replies to an interaction at once with an ephemeral message, for what the adapter itself
/// must refuse (a command it does not know).
pub(crate) async fn reply_now(
    rest: &Rest,
    interaction_id: InteractionId,
    token: &str,
    text: &str,
) -> Result<(), ChatError> {
    let response = CreateInteractionResponse::Message(
        CreateInteractionResponseMessage::new()
            .content(reply_text(text))
            .ephemeral(true)
            .allowed_mentions(CreateAllowedMentions::new()),
    );
    let route = Route::InteractionResponse {
        interaction_id,
        token,
    };
    rest.send(route, LightMethod::Post, Some(&response)).await
}

/// The core's private answer to a deferred interaction.
pub(crate) async fn answer(rest: &Rest, handle: &Handle, text: &str) -> Result<(), ChatError> {
    let application_id = ApplicationId::new(handle.application_id);
    let token = handle.token.as_str();
    match handle.kind {
        Kind::Component => {
            let followup = CreateInteractionResponseFollowup::new()
                .content(reply_text(text))
                .ephemeral(true)
                .allowed_mentions(CreateAllowedMentions::new());
            let route = Route::WebhookFollowupMessages {
                application_id,
                token,
            };
            rest.send(route, LightMethod::Post, Some(&followup)).await
        }
        Kind::Command => {
            // The deferred reply was created ephemeral; filling it in keeps it so.
            let edit = EditInteractionResponse::new()
                .content(reply_text(text))
                .allowed_mentions(CreateAllowedMentions::new());
            let route = Route::WebhookOriginalInteractionResponse {
                application_id,
                token,
            };
            rest.send(route, LightMethod::Patch, Some(&edit)).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_handles_and_redacts_the_token() {
        let handle = Handle {
            kind: Kind::Command,
            application_id: 77,
            token: "aW50:ZXI".into(),
        };
        let reference = handle.to_ref();
        assert_eq!(reference.handle, "command:77:aW50:ZXI");
        assert_eq!(Handle::parse(&reference).unwrap(), handle);
        assert!(!format!("{handle:?}").contains("aW50"));
    }

    #[test]
    fn denies_foreign_or_malformed_handles() {
        let handle = |channel: &str, handle: &str| InteractionRef {
            channel: channel.into(),
            handle: handle.into(),
        };
        for bad in [
            handle("telegram", "component:1:t"),
            handle("discord", "component:1"),
            handle("discord", "button:1:t"),
            handle("discord", "component:x:t"),
            handle("discord", "component:0:t"),
            handle("discord", "component:1:../../x/y"),
        ] {
            assert!(Handle::parse(&bad).is_err(), "{bad:?}");
        }
    }
}
